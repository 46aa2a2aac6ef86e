// Driving one provider call in the adapter tests: a one-message request, and the call drained to
// its response or to its ProviderError, with the events streamed on the way.
import {
  ProviderError,
  type ModelCall,
  type ModelRequest,
  type ModelStreamEvent,
} from "../../../src/ports/model-provider.js";

export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
    tools: [],
    options: {},
    signal: new AbortController().signal,
    ...overrides,
  };
}

export async function drain(call: ModelCall) {
  const events: ModelStreamEvent[] = [];
  for (;;) {
    const step = await call.next();
    if (step.done === true) return { events, response: step.value };
    events.push(step.value);
  }
}

export async function failure(
  call: ModelCall,
): Promise<{ error: ProviderError; events: ModelStreamEvent[] }> {
  const events: ModelStreamEvent[] = [];
  try {
    for (;;) {
      const step = await call.next();
      if (step.done === true) throw new Error("expected the call to fail");
      events.push(step.value);
    }
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    return { error: err, events };
  }
}
