"""Two replicas on one Redis (TETHER_DOOR_URL and TETHER_DOOR_URL_B): a door session made on A
(strictly validated, read back from B), a client tool call seen on A's stream, which then
closes; the turn parks, its call is answered through B; B's stream resumed after A's last event
replays the rest gaplessly, and A's stream resumed after one of B's text deltas gives the rest
of the text, then the very events B had."""

import os

from door import LOOKUP_TOOL, client, report, user_message, wait_until

a = client(_strict_response_validation=True)
b = client(_strict_response_validation=True, base_url=os.environ["TETHER_DOOR_URL_B"])
lenient_a = client().beta.agents.sessions
lenient_b = client(base_url=os.environ["TETHER_DOOR_URL_B"]).beta.agents.sessions
out: dict = {}

agent = a.beta.agents.create(model="gpt-test", tools=[LOOKUP_TOOL])
session = a.beta.agents.sessions.create(agent_id=agent.id, environment={"type": "none"})
out["read_on_b"] = b.beta.agents.sessions.retrieve(session.id) == session

events = lenient_a.events.stream(session.id)
lenient_a.events.create(session.id, events=[user_message('/tool lookup {"q":"far"}')])
last_on_a = None
for event in events:
    last_on_a = event
    if event.type == "agent.session.requires_action":
        break
events.close()
call = last_on_a.session.required_actions[0]
out["call"] = {"name": call.name, "arguments": call.arguments}

parked = wait_until(
    lambda: (s := b.beta.agents.sessions.retrieve(session.id)).status == "requires_action" and s,
    "the turn to park",
)
out["parked_on_b"] = [r.model_dump(mode="json") for r in parked.required_actions]
answer = {
    "type": "agent.session.input.tool_result",
    "turn_id": call.turn_id,
    "call_id": call.call_id,
    "success": True,
    "output": "answered on b",
}
lenient_b.events.create(session.id, events=[answer])  # type: ignore[list-item]

on_b = []
for event in lenient_b.events.stream(session.id, extra_query={"after": last_on_a.event_id}):
    on_b.append({"id": event.event_id, "type": event.type, "delta": getattr(event, "delta", None)})
    if event.type == "agent.session.idle":
        break
out["on_b"] = on_b

deltas = [e for e in on_b if e["type"] == "agent.session.turn.output_text.delta"]
on_a = []
for event in lenient_a.events.stream(session.id, extra_query={"after": deltas[0]["id"]}):
    on_a.append({"id": event.event_id, "type": event.type, "delta": getattr(event, "delta", None)})
    if event.type == "agent.session.idle":
        break
out["resumed_on_a"] = on_a
out["session"] = session.id
report(out)
