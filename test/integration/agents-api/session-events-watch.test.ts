// The events route's dealings with the runtime's watch (ADR 0037, "Events out"), over a real HTTP
// server and a scripted watch: a client that goes away ends the watch (nothing left running), and
// a cursor the log no longer holds reaches the client as an `error` event with `cursor_expired`.
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createFrontDoor, type SessionEventSource } from "../../../src/agents-api/index.js";
import type { CursoredEvent } from "../../../src/domain/session-events.js";
import { createMemoryIdempotencyKeyStore } from "../../../src/store/memory/idempotency-key-ops.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { createKeyCheck } from "../../../src/server/auth.js";
import { waitFor } from "../../support/wait-for.js";
import { eventsOf, openSse } from "./sse-client.js";

const SCALE = 2 ** 20;
let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

interface ScriptedWatch {
  source: SessionEventSource;
  /** Watches started and ended, with the cursor each started after. */
  started: number[];
  ended: number;
}

/** A watch that yields `entries` and then waits, as the runtime's does, until its signal aborts. */
function scriptedWatch(entries: CursoredEvent[]): ScriptedWatch {
  const record: ScriptedWatch = {
    started: [],
    ended: 0,
    source: {
      runtime: {
        async *watch(_sessionId, _publicId, afterCursor, _until, signal) {
          record.started.push(afterCursor);
          try {
            for (const entry of entries) yield entry;
            await new Promise((resolve) => signal.addEventListener("abort", resolve));
          } finally {
            record.ended++;
          }
        },
      },
      log: {
        lastSeq: () => Promise.resolve(0),
        tail: () => Promise.resolve([]),
        read: () => Promise.resolve({ entries: [], firstRetainedSeq: 1 }),
      },
      sessionExists: () => Promise.resolve(true),
    },
  };
  return record;
}

async function serve(source: SessionEventSource): Promise<string> {
  const door = createFrontDoor({
    store: createMemoryStore(),
    tenantOf: createKeyCheck(undefined),
    mcpServers: [],
    maxBodyBytes: 1 << 20,
    log: { error: () => undefined },
    sessionEvents: source,
    idempotency: { store: createMemoryIdempotencyKeyStore(), ttlMs: 60_000 },
  });
  server = http.createServer(door);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the events route and the watch", () => {
  it("a client that goes away ends the watch", async () => {
    const watch = scriptedWatch([]);
    const base = await serve(watch.source);
    const stream = await openSse(`${base}/v1/agents/sessions/s1/events`);
    expect(stream.response.status).toBe(200);
    await waitFor(() => watch.started.length === 1, { what: "the watch to start" });
    expect(watch.ended).toBe(0);
    stream.close();
    await waitFor(() => watch.ended === 1, { what: "the watch to end with the client" });
  });

  it("a cursor the log no longer holds: an error event with code cursor_expired", async () => {
    const gap: CursoredEvent = {
      cursor: 50 * SCALE,
      sessionId: "s1",
      turnId: "",
      event: {
        type: "gap",
        requestedAfterCursor: 3 * SCALE,
        retainedFromCursor: 50 * SCALE,
        snapshot: undefined,
      },
    };
    const watch = scriptedWatch([gap]);
    const base = await serve(watch.source);
    const stream = await openSse(`${base}/v1/agents/sessions/s1/events?after=evt_${4 * SCALE}`);
    const blocks = await stream.readUntil((e) => e.type === "error");
    stream.close();
    expect(watch.started).toEqual([3 * SCALE]);
    expect(eventsOf(blocks)).toEqual([
      expect.objectContaining({
        event_id: `evt_${50 * SCALE}`,
        type: "error",
        session_id: "s1",
        error: expect.objectContaining({ code: "cursor_expired" }) as unknown,
      }),
    ]);
  });
});
