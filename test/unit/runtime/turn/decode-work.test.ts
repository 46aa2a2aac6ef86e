// A turn decodes what its claims carry once, when it begins: the inputs' payloads and a resumed
// turn's parked progress, read by both its trace and its preparation.
import { describe, expect, it } from "vitest";
import { encodeInputPayload } from "../../../../src/runtime/turn/input-payload.js";
import { encodeProgress } from "../../../../src/runtime/turn/turn-parking.js";
import { decodeWork, type TurnWork } from "../../../../src/runtime/turn/turn-preparation.js";

const input = (payload: string) => ({ inputId: "in-1", payload }) as never;

function job(progress: string | undefined, payloads: string[]): TurnWork {
  return {
    fence: { sessionId: "default:s-1", fencingToken: 1, owner: { ownerId: "a" } },
    inputs: { inputs: payloads.map(input) },
    work: undefined,
    ...(progress !== undefined && {
      resumed: { status: "answered", parked: { turnId: "t-1", progress } },
    }),
  } as unknown as TurnWork;
}

describe("decodeWork", () => {
  it("decodes each input's payload once, a plain-text one as text", () => {
    const sent = encodeInputPayload({
      items: [{ type: "text", text: "hi" }],
      clientTools: [],
      settings: { model: "m" },
      trace: "00-aa-bb-01",
    });
    const decoded = decodeWork(job(undefined, [sent, "plain"]));
    expect(decoded.saved).toBeUndefined();
    expect(decoded.inputs.map((i) => i.payload)).toEqual([
      {
        items: [{ type: "text", text: "hi" }],
        clientTools: [],
        settings: { model: "m" },
        trace: "00-aa-bb-01",
      },
      { items: [{ type: "text", text: "plain" }], clientTools: [], settings: {} },
    ]);
  });

  it("reads a resumed turn's parked progress, with the trace of its earlier part", () => {
    const progress = encodeProgress({
      v: 1,
      engine: {} as never,
      settled: {},
      shown: [],
      settings: {},
      clientTools: [],
      trace: "00-cc-dd-01",
    });
    const decoded = decodeWork(job(progress, []));
    expect(decoded.unreadable).toBeUndefined();
    expect(decoded.saved?.trace).toBe("00-cc-dd-01");
  });

  it("keeps a progress this version cannot read as its error, for the preparation to throw", () => {
    const decoded = decodeWork(job(JSON.stringify({ v: 2 }), []));
    expect(decoded.saved).toBeUndefined();
    expect(decoded.unreadable?.error).toBeInstanceOf(Error);
  });
});
