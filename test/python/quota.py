"""Quota 429s through the Python SDK: a tenant whose one turn slot is held (by a turn waiting for
its client tool) gets RateLimitError with retry-after-ms for a message and for a create with
input; with retries, the SDK waits retry-after-ms and its retry is accepted once the slot is free
(the response hook answers the holder's tool when it sees the 429); a second events stream past
concurrent_streams is RateLimitError too."""

import os
import time

from openai import DefaultHttpxClient

from door import client, error_of, report, user_message, wait_until

plain = client().beta.agents.sessions
out: dict = {}

out["message"] = error_of(lambda: plain.events.create("py-other", events=[user_message("hi")]))
out["create"] = error_of(
    lambda: plain.create(environment={"type": "none"}, agent={"model": "m"}, input="hi")
)
out["sessions_after"] = [s.id for s in plain.list()]

attempts: list = []


def free_the_slot_on_429(response) -> None:
    retry_count = response.request.headers.get("x-stainless-retry-count")
    attempts.append({"status": response.status_code, "at": time.monotonic(), "retry": retry_count})
    if response.status_code != 429:
        return
    holder = os.environ["HOLDER_SESSION"]
    answer = {
        "type": "agent.session.input.tool_result",
        "turn_id": os.environ["HOLDER_TURN"],
        "call_id": os.environ["HOLDER_CALL"],
        "success": True,
        "output": "ok",
    }
    plain.events.create(holder, events=[answer])  # type: ignore[list-item]
    wait_until(lambda: plain.retrieve(holder).status == "idle", "the holder's turn to end")


retrying = client(
    max_retries=3, http_client=DefaultHttpxClient(event_hooks={"response": [free_the_slot_on_429]})
).beta.agents.sessions
retrying.events.create("py-other", events=[user_message("after the wait")])
out["attempts"] = [{"status": a["status"], "retry": a["retry"]} for a in attempts]
out["waited_s"] = attempts[-1]["at"] - attempts[0]["at"]

# concurrent_streams: 1. The first stream may meet the gRPC stream the test just closed: retried.
first = client(max_retries=3).beta.agents.sessions.events.stream("py-other")
out["second_stream"] = error_of(lambda: plain.events.stream("py-other"))
first.close()
report(out)
