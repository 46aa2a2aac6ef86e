// SSE framing of the front door (ADR 0037, "Events out"): headers flushed before any event, one
// `event:`/`data:` block per event, heartbeats as comment blocks only when the stream is quiet,
// never an `id:` line.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { openSse } from "../../../src/agents-api/sse-writer.js";
import { sleep, waitFor } from "../../support/wait-for.js";

function fakeResponse() {
  const sink = new EventEmitter() as EventEmitter & Record<string, unknown>;
  const log: string[] = [];
  Object.assign(sink, {
    destroyed: false,
    writeHead: (status: number, headers: Record<string, string>) =>
      log.push(`head ${status} ${headers["content-type"]} ${headers["cache-control"]}`),
    flushHeaders: () => log.push("flush"),
    write: (chunk: string) => log.push(chunk) > 0,
    end: () => log.push("end"),
  });
  return { res: sink, log };
}

describe("the SSE writer", () => {
  it("flushes the head first, frames events as event/data blocks and pings with comments when quiet", async () => {
    const { res, log } = fakeResponse();
    const sse = openSse(res as never, { "x-request-id": "req_1" }, 5);
    expect(log).toEqual(["head 200 text/event-stream; charset=utf-8 no-cache", "flush"]);
    await sse.events([{ event_id: "evt_1", type: "agent.session.idle" }]);
    expect(log[2]).toBe(
      'event: agent.session.idle\ndata: {"event_id":"evt_1","type":"agent.session.idle"}\n\n',
    );
    await sse.events([
      { event_id: "evt_2", type: "a" },
      { event_id: "evt_2.1", type: "b" },
    ]);
    expect(log[3]).toBe(
      'event: a\ndata: {"event_id":"evt_2","type":"a"}\n\nevent: b\ndata: {"event_id":"evt_2.1","type":"b"}\n\n',
    );
    await waitFor(() => log.filter((l) => l === ": ping\n\n").length >= 2, {
      what: "two heartbeats",
    });
    sse.end();
    expect(log.at(-1)).toBe("end");
    const body = log.slice(2, -1).join("");
    expect(body).not.toMatch(/^id:/mu);
    for (const block of body.split("\n\n").filter((b) => b !== "")) {
      expect(block.startsWith(": ") || /^event: .+\ndata: \{.*\}$/u.test(block), block).toBe(true);
    }
  });

  it("aborts `closed` when the client goes away and stops pinging", async () => {
    const { res, log } = fakeResponse();
    const sse = openSse(res as never, {}, 5);
    res.emit("close");
    expect(sse.closed.aborted).toBe(true);
    const written = log.length;
    await sleep(30);
    expect(log.length).toBe(written);
  });
});
