"""Answers to turns started over gRPC with a client tool that needs approval (the turns parked):
the parked approval read as the SDK's mcp_approval_request, approved through events.create, the
call that follows answered with a tool result while events.stream follows the turn to idle;
another turn's approval denied. The SDK's default (lenient) parsing: a session made over gRPC has
no door agent and no creation time, which strict validation requires."""

import os

from door import client, report, wait_until

sessions = client().beta.agents.sessions
out: dict = {}


def decision(request_id: str, choice: str) -> dict:
    return {
        "type": "agent.session.input.mcp_approval_request_result",
        "request_id": request_id,
        "response": {"type": "mcp_tool_call", "decision": choice},
    }


def waiting(session_id: str):
    return wait_until(
        lambda: (s := sessions.retrieve(session_id)).status == "requires_action" and s,
        f"{session_id} to wait for an answer",
    )


approved = os.environ["APPROVE_SESSION"]
parked = waiting(approved)
out["approval_required"] = [a.model_dump(mode="json") for a in parked.required_actions]
events = sessions.events.stream(approved)
sessions.events.create(approved, events=[decision(parked.required_actions[0].request_id, "approve")])
types = []
for event in events:
    types.append(event.type)
    if event.type == "agent.session.requires_action":
        call = event.session.required_actions[0]
        out["call_required"] = call.model_dump(mode="json")
        result = {
            "type": "agent.session.input.tool_result",
            "turn_id": call.turn_id,
            "call_id": call.call_id,
            "success": True,
            "output": "approved and done",
        }
        sessions.events.create(approved, events=[result])  # type: ignore[list-item]
    if event.type == "agent.session.turn.output_text.delta":
        out["text"] = out.get("text", "") + event.delta
    if event.type == "agent.session.idle":
        break
events.close()
out["approve_types"] = types

denied = os.environ["DENY_SESSION"]
request = waiting(denied).required_actions[0]
sessions.events.create(denied, events=[decision(request.request_id, "deny")])
out["denied_status"] = wait_until(
    lambda: (s := sessions.retrieve(denied)).status == "idle" and s.status, "the denied turn to end"
)
report(out)
