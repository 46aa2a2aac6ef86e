"""Turns through the Python SDK's streaming surface: the sessions.stream helper with a tool handler
and get_final_result(), events.stream opened before events.create posts the input, a resume from
an event id mid-text (extra_query after=), and a cancel while a client tool waits."""

from door import LOOKUP_TOOL, client, report, user_message

sdk = client()
sessions = sdk.beta.agents.sessions
out: dict = {}
agent = sdk.beta.agents.create(model="gpt-test", tools=[LOOKUP_TOOL])


def new_session() -> str:
    return sessions.create(agent_id=agent.id, environment={"type": "none"}).id


# The helper: subscribe, post the input, run the handler on the call, collect the final answer.
handled: list = []


def lookup(arguments: dict) -> str:
    handled.append(arguments)
    return "found " + arguments["q"]


helped = new_session()
with sessions.stream(helped, input='/tool lookup {"q":"oslo"}', tool_handlers={"lookup": lookup}) as stream:
    stream.with_result_collection()
    types = [event.type for event in stream]
    result = stream.get_final_result()
out["helper"] = {
    "session": helped,
    "handled": handled,
    "types": types,
    "text": [part.text for m in result.messages for part in m.content],
    "turn_status": result.turn.status,
}

# events.stream before events.create, read to idle; then a resume after a delta mid-text.
followed = new_session()
long_text = "a sentence long enough to stream in several text deltas, then the end."
events = sessions.events.stream(followed)
sessions.events.create(followed, events=[user_message(long_text)], idempotency_key="py-follow-1")
seen = []
for event in events:
    seen.append(event)
    if event.type == "agent.session.idle":
        break
events.close()
# The session a lifecycle event carries has the fields the Python types require.
out["idle_spend_control"] = seen[-1].session.spend_control.model_dump(mode="json")
deltas = [e for e in seen if e.type == "agent.session.turn.output_text.delta"]
mid = deltas[1].event_id
resumed = sessions.events.stream(followed, extra_query={"after": mid})
replayed = []
for event in resumed:
    replayed.append({"id": event.event_id, "type": event.type, "delta": getattr(event, "delta", None)})
    if event.type == "agent.session.idle":
        break
resumed.close()
ids = [e.event_id for e in seen]
out["follow"] = {
    "session": followed,
    "text": "".join(d.delta for d in deltas),
    "deltas": [{"id": d.event_id, "delta": d.delta} for d in deltas],
    "mid": mid,
    "types": [e.type for e in seen],
    "after_mid": ids[ids.index(mid) + 1 :],
    "replayed": replayed,
}

# A cancel while the client tool waits: the call closes incomplete, the turn is cancelled.
cancelled = new_session()
events = sessions.events.stream(cancelled)
sessions.events.create(cancelled, events=[user_message('/tool lookup {"q":"x"}')])
after_cancel = []
for event in events:
    if after_cancel or event.type == "agent.session.requires_action":
        after_cancel.append(event.model_dump(mode="json"))
    if event.type == "agent.session.requires_action":
        out["required"] = [a.model_dump(mode="json") for a in event.session.required_actions]
        sessions.events.create(cancelled, events=[{"type": "agent.session.input.cancel"}])
    if event.type == "agent.session.idle" and after_cancel:
        break
events.close()
out["cancel"] = {"session": cancelled, "events": after_cancel[1:]}
report(out)
