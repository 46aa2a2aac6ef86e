"""The Python SDK's streaming create: sessions.create(stream=True) answers the session's events from
its creation, get_final_result() collects the first turn's answer, and the tool handlers given to
the create answer the client tool on the same stream."""

from door import LOOKUP_TOOL, client, report

sdk = client()
sessions = sdk.beta.agents.sessions
out: dict = {}
agent = sdk.beta.agents.create(model="gpt-test", tools=[LOOKUP_TOOL])

# A plain first turn: the stream from agent.session.created to idle, and its final answer.
plain = sessions.create(
    agent_id=agent.id, environment={"type": "none"}, input="hello from python", stream=True
)
plain.with_result_collection()
types = [event.type for event in plain]
result = plain.get_final_result()
out["plain"] = {
    "types": types,
    "text": [part.text for m in result.messages for part in m.content],
    "turn_status": result.turn.status,
}

# A first turn that calls the client tool: the create's handler answers it on the stream.
handled: list = []


def lookup(arguments: dict) -> str:
    handled.append(arguments)
    return "found " + arguments["q"]


tooled = sessions.create(
    agent_id=agent.id,
    environment={"type": "none"},
    input='/tool lookup {"q":"bergen"}',
    stream=True,
    tool_handlers={"lookup": lookup},
)
result = tooled.get_final_result()
out["tooled"] = {
    "handled": handled,
    "text": [part.text for m in result.messages for part in m.content],
    "turn_status": result.turn.status,
    "session": result.turn.session_id,
}
report(out)
