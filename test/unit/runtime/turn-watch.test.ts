// A StreamTurn follows the turn that takes its input: events before it and of other turns are
// passed over, a gap is told, and the stream ends with that turn's turn_completed.
import { describe, expect, it } from "vitest";
import type { CursoredEvent, SessionEvent } from "../../../src/domain/session-events.js";
import { followTurn } from "../../../src/runtime/turn-watch.js";

const at = (cursor: number, turnId: string, event: SessionEvent): CursoredEvent => ({
  cursor,
  sessionId: "s",
  turnId,
  event,
});

async function* of(items: CursoredEvent[]): AsyncGenerator<CursoredEvent> {
  yield* items;
}

async function cursorsOf(events: AsyncIterable<CursoredEvent>): Promise<number[]> {
  const out: number[] = [];
  for await (const item of events) out.push(item.cursor);
  return out;
}

/** Only its type matters to the follower. */
const done = { type: "turn_completed" } as SessionEvent;

describe("followTurn", () => {
  it("follows the turn that started with the input, through its turn_completed", async () => {
    const events = [
      at(1, "t0", { type: "text_delta", text: "earlier turn" }),
      at(2, "t1", { type: "turn_started", inputIds: ["other"], turnIndex: 1 }),
      at(3, "t2", { type: "turn_started", inputIds: ["mine"], turnIndex: 2 }),
      at(4, "t1", { type: "text_delta", text: "not mine" }),
      at(5, "", {
        type: "gap",
        requestedAfterCursor: 0,
        retainedFromCursor: 5,
        snapshot: undefined,
      }),
      at(6, "t2", { type: "text_delta", text: "mine" }),
      at(7, "t2", done),
      at(8, "t2", { type: "text_delta", text: "after the end" }),
    ];
    expect(await cursorsOf(followTurn(of(events), "mine"))).toEqual([3, 5, 6, 7]);
  });

  it("follows a running turn the input was admitted into", async () => {
    const events = [
      at(1, "t1", { type: "turn_started", inputIds: ["other"], turnIndex: 1 }),
      at(2, "t1", { type: "text_delta", text: "before" }),
      at(3, "t1", { type: "input_admitted", inputIds: ["mine"] }),
      at(4, "t1", done),
    ];
    expect(await cursorsOf(followTurn(of(events), "mine"))).toEqual([3, 4]);
  });
});
