"""A grpcio client of TurnService for the interop tests.

Generates its stubs from proto/ with grpc_tools.protoc into a directory given on the command line,
runs one streaming turn that asks for a client-executed tool, answers the tool through
SubmitToolResults, and prints one JSON line per event for the test to assert on.
"""

import argparse
import json
import os
import sys


def generate(proto_dir: str, out_dir: str) -> None:
    from grpc_tools import protoc
    import grpc_tools

    os.makedirs(out_dir, exist_ok=True)
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    files = sorted(
        os.path.join("tether/v1", name)
        for name in os.listdir(os.path.join(proto_dir, "tether/v1"))
        if name.endswith(".proto")
    )
    code = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{proto_dir}",
            f"-I{well_known}",
            f"--python_out={out_dir}",
            f"--grpc_python_out={out_dir}",
            *files,
        ]
    )
    if code != 0:
        raise SystemExit(f"protoc failed with {code}")


def run(args: argparse.Namespace) -> None:
    generate(args.proto, args.out)
    sys.path.insert(0, args.out)
    import grpc
    from tether.v1 import turn_pb2, turn_service_pb2, turn_service_pb2_grpc

    with grpc.insecure_channel(args.addr) as channel:
        turns = turn_service_pb2_grpc.TurnServiceStub(channel)
        request = turn_service_pb2.StreamTurnRequest(
            session_id=args.session,
            input=[turn_pb2.InputPart(text=args.prompt)],
            client_tools=[
                turn_pb2.ToolDefinition(
                    name="lookup",
                    description="Looks a key up on the client.",
                    parameters_json_schema='{"type":"object","properties":{"key":{"type":"string"}}}',
                )
            ],
        )
        for response in turns.StreamTurn(request, timeout=20):
            event = response.event
            kind = event.WhichOneof("event")
            line = {"kind": kind, "cursor": event.cursor, "turn_id": event.turn_id}
            if kind == "text_delta":
                line["text"] = event.text_delta.text
            elif kind == "tool_call_requested":
                call = event.tool_call_requested
                line.update(call_id=call.call_id, name=call.name, arguments_json=call.arguments_json)
                ack = turns.SubmitToolResults(
                    turn_service_pb2.SubmitToolResultsRequest(
                        session_id=args.session,
                        turn_id=event.turn_id,
                        results=[turn_service_pb2.ToolResult(call_id=call.call_id, output=args.answer)],
                    ),
                    timeout=10,
                )
                line["accepted_call_ids"] = list(ack.accepted_call_ids)
            elif kind == "tool_call_finished":
                done = event.tool_call_finished
                line.update(call_id=done.call_id, output=done.output)
            elif kind == "turn_completed":
                outcome = event.turn_completed.outcome
                which = outcome.WhichOneof("kind")
                line["outcome"] = which
                if which == "finished":
                    line["value"] = outcome.finished.value
                elif which is not None:
                    line["value"] = getattr(outcome, which).message
            print(json.dumps(line), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--addr", required=True)
    parser.add_argument("--proto", required=True, help="the repository's proto/ directory")
    parser.add_argument("--out", required=True, help="where the generated stubs go")
    parser.add_argument("--session", default="python-interop")
    parser.add_argument("--prompt", default='/tool lookup {"key":"py"}')
    parser.add_argument("--answer", default="from-python")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
