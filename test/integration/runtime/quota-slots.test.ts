// Concurrency slots over a turn's life (ADR 0015), on memory and Redis: a turn that runs longer
// than a lease TTL keeps its slot (renewed with the leases), so a waiting session does not start
// beside it; a turn that parks gives its slot back (another session runs meanwhile) and takes one
// again when it resumes.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, test } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import type { CursoredEvent } from "../../../src/domain/session-events.js";
import type { QuotaConfig } from "../../../src/domain/quotas.js";
import { createScriptedProvider } from "../../../src/providers/scripted.js";
import type { RuntimeLogger } from "../../../src/runtime/deps.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { startSweeper } from "../../../src/runtime/background/sweeper.js";
import { createRuntimeHarness, textCommand } from "../../support/runtime-harness.js";
import { waitFor } from "../../support/wait-for.js";

const redis = new Redis(inject("redisUrl"));
afterAll(() => redis.disconnect());

const ONE_AT_A_TIME: QuotaConfig = {
  tenants: { acme: { concurrent_turns: { max: 1, mode: "queue" } } },
  default: undefined,
};
const LEASE_TTL_MS = 300;

/** Records the quota admissions the runtime logs. */
function admissions() {
  const records: { sessionId: string; kind: string }[] = [];
  const logger: RuntimeLogger = {
    ...silentLogger,
    info: (fields, message) => {
      if (message === "quota admission")
        records.push(fields as { sessionId: string; kind: string });
    },
  };
  return { records, logger };
}

async function collect(events: AsyncIterable<CursoredEvent>): Promise<CursoredEvent[]> {
  const out: CursoredEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

for (const backend of ["memory", "redis"] as const) {
  describe(`quota slots on ${backend}`, () => {
    test("a turn longer than a lease TTL keeps its slot; the waiting session starts only after it", async () => {
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const running: string[] = [];
      let overlap = false;
      const provider = createScriptedProvider({
        script: () => ({ response: { fullText: "done", parts: [{ type: "text", text: "done" }] } }),
      });
      // The long turn's model call waits at the gate; a second call running beside it is overlap.
      const slow = {
        name: provider.name,
        capabilities: provider.capabilities,
        call: (request: Parameters<typeof provider.call>[0]) => {
          const long = JSON.stringify(request.messages).includes("long");
          const inner = provider.call(request);
          return (async function* () {
            running.push(long ? "long" : "short");
            if (running.length > 1) overlap = true;
            try {
              if (long) await gate;
              let step = await inner.next();
              while (step.done !== true) {
                yield step.value;
                step = await inner.next();
              }
              return step.value;
            } finally {
              running.splice(running.indexOf(long ? "long" : "short"), 1);
            }
          })();
        },
      };
      const { records, logger } = admissions();
      const h = createRuntimeHarness({
        provider: slow,
        leaseTtlMs: LEASE_TTL_MS,
        logger,
        quotas: { config: ONE_AT_A_TIME, recheckMs: 20 },
        ...(backend === "redis" ? { redis, namespace: `slots-${randomUUID()}` } : {}),
      });
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 20,
      });
      try {
        const abort = new AbortController();
        const long = collect(h.runtime.streamTurn(textCommand("acme:long", "long"), abort.signal));
        await waitFor(() => running.includes("long"), { what: "the long turn's model call" });
        const startedAt = Date.now();
        const short = collect(
          h.runtime.streamTurn(textCommand("acme:short", "short"), abort.signal),
        );
        // Three lease TTLs pass while the long turn holds its slot: the waiting session is
        // refused again and again, and never admitted beside it.
        await waitFor(
          () =>
            Date.now() - startedAt > 3 * LEASE_TTL_MS &&
            records.filter((r) => r.sessionId === "acme:short" && r.kind === "refused").length >= 3,
          { what: "three lease TTLs of refusals for the waiting session" },
        );
        expect(
          records.filter((r) => r.sessionId === "acme:short" && r.kind === "admitted"),
        ).toEqual([]);
        expect((await h.quotas.readQuotaUsage("acme")).runningTurns).toBe(1);
        release();
        const [longEvents, shortEvents] = await Promise.all([long, short]);
        expect(longEvents.at(-1)?.event.type).toBe("turn_completed");
        expect(shortEvents.at(-1)?.event.type).toBe("turn_completed");
        expect(overlap).toBe(false);
        await waitFor(async () => (await h.quotas.readQuotaUsage("acme")).runningTurns === 0, {
          what: "the last slot's release",
        });
      } finally {
        release();
        sweeper.stop();
        await h.runtime.drain(1_000);
      }
    });

    test("a parked turn gives its slot back; another session runs meanwhile; the resume takes a slot again", async () => {
      const provider = createScriptedProvider({
        script: (request) => {
          const last = request.messages.at(-1);
          if (last?.role === "tool") {
            return {
              response: { fullText: "resumed", parts: [{ type: "text", text: "resumed" }] },
            };
          }
          if (JSON.stringify(last).includes("park")) {
            return {
              response: {
                parts: [
                  { type: "tool_call", callId: "c-1", toolName: "lookup", argumentsJson: "{}" },
                ],
              },
            };
          }
          return { response: { fullText: "quick", parts: [{ type: "text", text: "quick" }] } };
        },
      });
      const { records, logger } = admissions();
      const h = createRuntimeHarness({
        provider,
        parkAfterMs: 0,
        logger,
        quotas: { config: ONE_AT_A_TIME, recheckMs: 20 },
        ...(backend === "redis" ? { redis, namespace: `slots-${randomUUID()}` } : {}),
      });
      const sweeper = startSweeper({
        driver: h.runtime.driver,
        ready: h.deps.ready,
        logger: silentLogger,
        intervalMs: 20,
      });
      try {
        const abort = new AbortController();
        const lookup = {
          name: "lookup",
          description: "asks the client",
          inputSchema: { type: "object" },
        };
        const parkedEvents: CursoredEvent[] = [];
        const parked = (async () => {
          for await (const e of h.runtime.streamTurn(
            textCommand("acme:parks", "park", { clientTools: [lookup] }),
            abort.signal,
          )) {
            parkedEvents.push(e);
          }
        })();
        await waitFor(() => parkedEvents.some((e) => e.event.type === "turn_parked"), {
          what: "the turn to park",
        });
        await waitFor(async () => (await h.quotas.readQuotaUsage("acme")).runningTurns === 0, {
          what: "the parked turn's slot to be given back",
        });
        const other = await collect(
          h.runtime.streamTurn(textCommand("acme:other", "other"), abort.signal),
        );
        expect(other.at(-1)?.event.type).toBe("turn_completed");
        const turnId = parkedEvents.find((e) => e.event.type === "turn_parked")?.turnId ?? "";
        await h.runtime.submitToolResults("acme:parks" as SessionId, turnId, [
          { callId: "c-1", output: "42", isError: false },
        ]);
        await parked;
        expect(parkedEvents.at(-1)?.event.type).toBe("turn_completed");
        // Admitted at the start and again at the resume; the other session once.
        expect(
          records.filter((r) => r.sessionId === "acme:parks" && r.kind === "admitted"),
        ).toHaveLength(2);
        expect((await h.quotas.readQuotaUsage("acme")).turnsThisMinute).toBe(3);
      } finally {
        sweeper.stop();
        await h.runtime.drain(1_000);
      }
    });
  });
}
