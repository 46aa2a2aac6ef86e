"""Agents and sessions through the Python SDK with strict response validation (every object the
door answers must match the SDK's types): create, retrieve, update, list with auto-pagination,
delete, and the error classes the door's statuses map to."""

import openai

from door import LOOKUP_TOOL, client, error_of, report, user_message, wait_until

sdk = client(_strict_response_validation=True)
agents = sdk.beta.agents
sessions = sdk.beta.agents.sessions
out: dict = {}

agent = agents.create(
    model="gpt-test",
    name="forecaster",
    instructions="Answer briefly.",
    metadata={"team": "a"},
    tools=[LOOKUP_TOOL],
)
out["agent"] = agent.model_dump(mode="json")
out["retrieved_same"] = agents.retrieve(agent.id) == agent
updated = agents.update(agent.id, instructions=None, metadata={"team": "b"})
out["updated"] = {"instructions": updated.instructions, "metadata": updated.metadata}
more = [agents.create(model="gpt-test", name=f"agent-{i}").id for i in range(4)]
out["agents_created"] = [agent.id, *more]
out["agents_listed"] = [a.id for a in agents.list(limit=2)]
out["agents_listed_asc"] = [a.id for a in agents.list(limit=3, order="asc")]
out["agent_deleted"] = agents.delete(more[0]).model_dump(mode="json")
out["agent_not_found"] = error_of(lambda: agents.retrieve(more[0]))
out["bad_tool"] = error_of(
    lambda: agents.create(model="gpt-test", tools=[{"type": "web_search"}])  # type: ignore[list-item]
)

session = sessions.create(
    agent_id=agent.id, environment={"type": "none"}, input="hello", metadata={"k": "v"}
)
out["session_created"] = {"id": session.id, "agent_id": session.agent.id}
idle = wait_until(
    lambda: (s := sessions.retrieve(session.id)).status == "idle" and s.usage.total_tokens > 0 and s,
    "the first turn to finish",
)
out["session_idle"] = idle.model_dump(mode="json")
out["session_updated"] = sessions.update(session.id, metadata={"k": "w"}).metadata
extra = [sessions.create(agent_id=agent.id, environment={"type": "none"}).id for _ in range(3)]
out["sessions_created"] = [session.id, *extra]
out["sessions_listed"] = [s.id for s in sessions.list(limit=2, agent_id=agent.id)]
out["sessions_listed_asc"] = [s.id for s in sessions.list(limit=2, order="asc", agent_id=agent.id)]
out["sessions_by_metadata"] = [s.id for s in sessions.list(extra_query={"metadata[k]": "w"})]
out["no_environment"] = error_of(
    lambda: sessions.create(environment={"type": "openai_hosted"}, agent={"model": "m"})  # type: ignore[arg-type, typeddict-item]
)

# A turn waiting for its client tool: the session cannot be deleted until it is cancelled.
waiting = sessions.create(
    environment={"type": "none"},
    agent={"model": "gpt-test", "tools": [LOOKUP_TOOL]},
    input='/tool lookup {"q":"x"}',
)
wait_until(lambda: sessions.retrieve(waiting.id).status != "idle", "the tool turn to start")
out["delete_running"] = error_of(lambda: sessions.delete(waiting.id))
sessions.events.create(waiting.id, events=[{"type": "agent.session.input.cancel"}])
wait_until(lambda: sessions.retrieve(waiting.id).status == "idle", "the cancel to end the turn")
out["session_deleted"] = sessions.delete(waiting.id).model_dump(mode="json")
out["session_not_found"] = error_of(lambda: sessions.retrieve(waiting.id))

# One Idempotency-Key, two different messages: the second is 422.
sessions.events.create(session.id, events=[user_message("keyed")], idempotency_key="py-key-1")
out["key_reused"] = error_of(
    lambda: sessions.events.create(
        session.id, events=[user_message("something else")], idempotency_key="py-key-1"
    )
)
out["unknown_call"] = error_of(
    lambda: sessions.events.create(
        session.id,
        events=[
            {
                "type": "agent.session.input.tool_result",
                "turn_id": "turn-x",
                "call_id": "call-nope",
                "success": True,
                "output": "x",
            }
        ],
    )
)
out["sdk_version"] = openai.__version__
report(out)
