// A client that cancels a stream is an ordinary event, not a server failure: it must not write an
// error-level record (with a stack) that any client could repeat to flood the error log.
import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterEach, expect, it } from "vitest";
import { createTurnService } from "../../../src/api/turn-service.js";
import { TurnService } from "../../../src/gen/tether/v1/turn_service_pb.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import { createLogger } from "../../../src/server/logger.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

let h: ApiServerHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it("a client cancelling a stream writes no error-level record and no stack", async () => {
  const records: { level: number; msg?: string; err?: { stack?: string } }[] = [];
  const destination = new PassThrough();
  destination.on("data", (line: Buffer) => {
    for (const text of line
      .toString("utf8")
      .split("\n")
      .filter((l) => l !== "")) {
      records.push(JSON.parse(text) as (typeof records)[number]);
    }
  });
  const { runtime } = createRuntimeHarness({ provider: createEchoProvider({ chunkSize: 1 }) });
  h = await startApiServer({
    logger: createLogger({ level: "debug", destination }),
    routes: (router) => router.service(TurnService, createTurnService({ runtime })),
  });
  const transports = [
    h.transport,
    createConnectTransport({ baseUrl: h.baseUrl, httpVersion: "1.1" }),
  ];
  for (const transport of transports) {
    const turns = createClient(TurnService, transport);
    const abort = new AbortController();
    const stream = turns.streamTurn(
      {
        sessionId: `c-${randomUUID()}`,
        input: [{ kind: { case: "text", value: "x".repeat(20_000) } }],
      },
      { signal: abort.signal },
    );
    try {
      for await (const r of stream) {
        if (r.event?.event.case === "textDelta") abort.abort();
      }
    } catch {
      // the client's own cancellation
    }
  }
  // The cancellation was seen, and said at debug level by its code alone (a call the client left
  // may also end without an error to log: one line, not one per call).
  await waitFor(() => records.some((r) => r.level === 20 && r.msg === "client left the call"), {
    what: "the server to log a call the client left",
    detail: () => JSON.stringify(records),
  });
  // Both calls' turns have ended and their streams are closed: whatever they log is in.
  expect(await runtime.drain(15_000)).toEqual({ released: true });
  expect(records.filter((r) => r.level >= 50)).toEqual([]);
  expect(records.filter((r) => r.err?.stack !== undefined)).toEqual([]);
});
