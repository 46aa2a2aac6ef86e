// The event mapper under the transport's `yield*` layers: a throw into the stream (the client
// went away) ends the source, running its cleanup, and passes the transport's error on unchanged.
import { describe, expect, it } from "vitest";
import { mapEvents } from "../../../src/api/map-events.js";

describe("mapEvents", () => {
  it("converts items as they are pulled and ends with the source", async () => {
    async function* source() {
      yield 1;
      yield 2;
    }
    const out: string[] = [];
    for await (const item of mapEvents(source(), (n) => `#${n}`)) out.push(item);
    expect(out).toEqual(["#1", "#2"]);
  });

  it("ends the source and rethrows when the transport throws into a yield* over it", async () => {
    let cleanedUp = false;
    async function* source() {
      try {
        yield 1;
        yield 2;
      } finally {
        cleanedUp = true;
      }
    }
    // The shape of the error and metrics interceptors: generators delegating with yield*.
    async function* interceptor() {
      yield* mapEvents(source(), (n) => n * 10);
    }
    const stream = interceptor();
    expect(await stream.next()).toEqual({ done: false, value: 10 });
    const gone = new Error("stream reset by the client");
    await expect(stream.throw(gone)).rejects.toBe(gone);
    expect(cleanedUp).toBe(true);
  });
});
