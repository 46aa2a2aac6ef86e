"""What the scenario scripts share: a client of the front door named by the environment the test
gives (TETHER_DOOR_URL, the server's /v1), a bounded wait, and the one JSON line of results each
script prints last for the test to read."""

import json
import os
import time
from typing import Any, Callable

from openai import OpenAI


def client(**options: Any) -> OpenAI:
    options.setdefault("max_retries", 0)
    options.setdefault("base_url", os.environ["TETHER_DOOR_URL"])
    return OpenAI(api_key="any-key", **options)


def wait_until(check: Callable[[], Any], what: str, timeout_s: float = 15.0) -> Any:
    """Polls until check() is truthy (a busy machine may take a while); fails naming what."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


def error_of(call: Callable[[], Any]) -> dict[str, Any]:
    """The SDK error a call raises, as the facts the test checks."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the class is what is reported
        return {
            "class": type(error).__name__,
            "status": getattr(error, "status_code", None),
            "param": getattr(error, "param", None),
            "code": getattr(error, "code", None),
            "message": getattr(error, "message", str(error)),
            "retry_after_ms": _header(error, "retry-after-ms"),
            "should_retry": _header(error, "x-should-retry"),
        }
    raise AssertionError("the call did not fail")


def _header(error: Exception, name: str) -> str | None:
    response = getattr(error, "response", None)
    return None if response is None else response.headers.get(name)


def report(results: dict[str, Any]) -> None:
    print(json.dumps(results, sort_keys=True))


def user_message(text: str) -> dict[str, Any]:
    return {
        "type": "agent.session.input.message",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}],
    }


LOOKUP_TOOL = {
    "type": "function",
    "name": "lookup",
    "description": "Looks a word up.",
    "parameters": {"type": "object"},
}
