"""Automations through the Python SDK with strict response validation (every Automation and
AutomationInvocation the door answers must match the SDK's types), on the real server's clock: a
periodic automation on an existing session (a yearly cron that never comes due during the test) and
a once automation on a new session whose run_at is a few seconds ahead, waited for with a bound;
retrieve, update, auto-paged lists with the session_id filter, pause and resume, a manual invocation
and its listing, a create retried under its Idempotency-Key, delete, and the error classes."""

import time

from door import client, error_of, report, wait_until

sdk = client(_strict_response_validation=True)
automations = sdk.beta.agents.automations
out: dict = {}

agent = sdk.beta.agents.create(model="gpt-test", name="reporter")
session = sdk.beta.agents.sessions.create(agent_id=agent.id, environment={"type": "none"})
other = sdk.beta.agents.sessions.create(agent_id=agent.id, environment={"type": "none"})

on_session = {"type": "existing_session", "session_id": session.id, "instructions": "report"}
periodic = automations.create(
    type="periodic",
    name="yearly report",
    expression="0 9 1 1 *",
    timezone="Europe/Paris",
    metadata={"team": "ops"},
    target=on_session,
)
out["periodic"] = periodic.model_dump(mode="json")
out["retrieved_same"] = automations.retrieve(periodic.id) == periodic
updated = automations.update(periodic.id, expression="0 10 1 1 *", metadata={"team": "sre"})
out["updated"] = {
    "expression": updated.expression,  # type: ignore[union-attr]
    "metadata": updated.metadata,
    "name": updated.name,
}

# Four more on the two sessions; auto-paging by 2, with and without the session_id filter.
more = [
    automations.create(
        type="periodic",
        name=f"more-{i}",
        expression="0 9 1 1 *",
        timezone="UTC",
        target={**on_session, "session_id": (session if i % 2 == 0 else other).id},
    ).id
    for i in range(4)
]
out["created"] = [periodic.id, *more]
out["listed"] = [a.id for a in automations.list(limit=2, session_id=session.id)]
out["listed_asc"] = [a.id for a in automations.list(limit=2, order="asc", session_id=other.id)]

# A create retried under its Idempotency-Key answers the same automation.
keyed = {
    "type": "periodic",
    "name": "keyed",
    "expression": "0 9 1 1 *",
    "timezone": "UTC",
    "target": {**on_session, "session_id": other.id},
}
first = automations.create(**keyed, extra_headers={"Idempotency-Key": "py-auto-1"})  # type: ignore[arg-type]
again = automations.create(**keyed, extra_headers={"Idempotency-Key": "py-auto-1"})  # type: ignore[arg-type]
out["keyed_same"] = first == again

paused = automations.pause(periodic.id)
out["paused"] = {"status": paused.status, "pause_reason": paused.pause_reason}
out["resumed"] = automations.resume(periodic.id).status

# A manual invocation: queued (or already completed), then completed under the same id.
queued = automations.invocations.create(periodic.id, extra_headers={"Idempotency-Key": "py-inv-1"})
out["manual_queued"] = queued.model_dump(mode="json")
done = wait_until(
    lambda: (i := automations.invocations.retrieve(queued.id, automation_id=periodic.id)).status
    == "completed"
    and i,
    "the manual invocation to complete",
)
out["manual_done"] = done.model_dump(mode="json")
out["manual_retried"] = automations.invocations.create(
    periodic.id, extra_headers={"Idempotency-Key": "py-inv-1"}
).model_dump(mode="json")
out["invocations_listed"] = [i.id for i in automations.invocations.list(periodic.id, limit=1)]

# A once automation on a new session, a few seconds ahead on the server's clock.
once = automations.create(
    type="once",
    name="soon",
    run_at=int(time.time()) + 3,
    target={
        "type": "new_session",
        "agent_id": agent.id,
        "environment": {"type": "none"},
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "once"}]}],
        "metadata": {"made_by": "automation"},
    },
)
out["once"] = once.model_dump(mode="json")
out["once_completed"] = wait_until(
    lambda: automations.retrieve(once.id).status == "completed", "the once automation to fire", 30
)
runs = list(automations.invocations.list(once.id))
out["once_runs"] = [r.model_dump(mode="json") for r in runs]

out["deleted"] = automations.delete(more[0]).model_dump(mode="json")
out["not_found"] = error_of(lambda: automations.retrieve(more[0]))
out["bad_cron"] = error_of(
    lambda: automations.create(
        type="periodic", name="x", expression="every day", timezone="UTC", target=on_session
    )
)
out["bad_zone"] = error_of(
    lambda: automations.create(
        type="periodic", name="x", expression="0 9 * * *", timezone="Mars/Olympus", target=on_session
    )
)
out["late_run_at"] = error_of(
    lambda: automations.create(type="once", name="x", run_at=1, target=on_session)
)
out["hosted"] = error_of(
    lambda: automations.create(
        type="once",
        name="x",
        run_at=int(time.time()) + 3600,
        target={
            "type": "new_session",
            "agent_id": agent.id,
            "environment": {"type": "openai_hosted"},  # type: ignore[typeddict-item]
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "x"}]}],
        },
    )
)
out["unknown_session"] = error_of(
    lambda: automations.create(
        type="periodic",
        name="x",
        expression="0 9 * * *",
        timezone="UTC",
        target={**on_session, "session_id": "sess_nope"},
    )
)
out["unknown_invocation"] = error_of(
    lambda: automations.invocations.retrieve("inv_m1", automation_id=periodic.id)
)
report(out)
