"""A grpcio client of TurnService for the interop tests.

Generates its stubs from proto/ with grpc_tools.protoc into a directory given on the command line,
runs one streaming turn that asks for a client-executed tool, answers the tool through
SubmitToolResults, and prints one JSON line per event for the test to assert on.

With --approval the tool needs approval: the client waits for the turn to park, approves the call
through DecideToolCalls, waits for it to park again on the tool's result, and answers; both
answers go to --answer-addr (another replica of the same deployment) when given.
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
    from tether.v1 import (
        session_service_pb2,
        session_service_pb2_grpc,
        transcript_pb2,
        turn_pb2,
        turn_service_pb2,
        turn_service_pb2_grpc,
    )

    answer_addr = args.answer_addr or args.addr
    with grpc.insecure_channel(args.addr) as channel, grpc.insecure_channel(answer_addr) as other:
        turns = turn_service_pb2_grpc.TurnServiceStub(channel)
        answers = turn_service_pb2_grpc.TurnServiceStub(other)
        request = turn_service_pb2.StreamTurnRequest(
            session_id=args.session,
            input=[turn_pb2.InputPart(text=args.prompt)],
            client_tools=[
                turn_pb2.ToolDefinition(
                    name="lookup",
                    description="Looks a key up on the client.",
                    parameters_json_schema='{"type":"object","properties":{"key":{"type":"string"}}}',
                    requires_approval=args.approval,
                )
            ],
        )
        for response in turns.StreamTurn(request, timeout=20):
            event = response.event
            kind = event.WhichOneof("event")
            line = {"kind": kind, "cursor": event.cursor, "turn_id": event.turn_id}
            if kind == "text_delta":
                line["text"] = event.text_delta.text
            elif kind == "tool_approval_requested":
                asked = event.tool_approval_requested
                line.update(call_id=asked.call_id, name=asked.name, arguments_json=asked.arguments_json)
            elif kind == "turn_parked":
                parked = event.turn_parked
                line.update(
                    pending_call_ids=list(parked.pending_call_ids),
                    approval_call_ids=list(parked.approval_call_ids),
                )
                if parked.approval_call_ids:
                    ack = answers.DecideToolCalls(
                        turn_service_pb2.DecideToolCallsRequest(
                            session_id=args.session,
                            turn_id=event.turn_id,
                            decisions=[
                                turn_service_pb2.ToolCallDecision(call_id=c, approve=True, reason="python")
                                for c in parked.approval_call_ids
                            ],
                        ),
                        timeout=10,
                    )
                    line["accepted_call_ids"] = list(ack.accepted_call_ids)
                elif args.approval and parked.pending_call_ids:
                    ack = answers.SubmitToolResults(
                        turn_service_pb2.SubmitToolResultsRequest(
                            session_id=args.session,
                            turn_id=event.turn_id,
                            results=[
                                turn_service_pb2.ToolResult(call_id=c, output=args.answer)
                                for c in parked.pending_call_ids
                            ],
                        ),
                        timeout=10,
                    )
                    line["accepted_call_ids"] = list(ack.accepted_call_ids)
            elif kind == "turn_resumed":
                line["reason"] = turn_pb2.ResumeReason.Name(event.turn_resumed.reason)
            elif kind == "tool_call_requested":
                call = event.tool_call_requested
                line.update(call_id=call.call_id, name=call.name, arguments_json=call.arguments_json)
                if args.approval:
                    # answered once the turn parks on it (above)
                    print(json.dumps(line), flush=True)
                    continue
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

        # The committed transcript, typed: one line with each message's role, parts and revision.
        sessions = session_service_pb2_grpc.SessionServiceStub(channel)
        got = sessions.GetSession(
            session_service_pb2.GetSessionRequest(session_id=args.session, include_messages=True),
            timeout=10,
        )
        transcript = [
            {
                "role": transcript_pb2.TranscriptMessage.Role.Name(m.role),
                "parts": [p.WhichOneof("kind") for p in m.parts],
                "turn_id": m.turn_id,
                "revision": m.revision,
            }
            for m in got.transcript
        ]
        print(json.dumps({"kind": "transcript", "cursor": 0, "messages": transcript}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--addr", required=True)
    parser.add_argument("--proto", required=True, help="the repository's proto/ directory")
    parser.add_argument("--out", required=True, help="where the generated stubs go")
    parser.add_argument("--session", default="python-interop")
    parser.add_argument("--prompt", default='/tool lookup {"key":"py"}')
    parser.add_argument("--answer", default="from-python")
    parser.add_argument("--approval", action="store_true", help="the tool needs approval")
    parser.add_argument("--answer-addr", default="", help="send answers to this replica")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
