// A turn's events in its commit (ADR 0040): the writer holds the last text window and the
// usage, and a store whose commit appends the announcement appends them in the commit's step,
// so an echo turn's only log append of its own is its turn_started. The log holds the same
// entries, in the same order, as on the write-then-commit path; a commit that fails leaves none
// of the held ones; a watcher on another replica reads turn_started, the text and turn_completed
// in order. Memory, Redis and Redis Cluster.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionId } from "../../../src/domain/ids.js";
import { TetherError } from "../../../src/domain/errors.js";
import type { EventLog, LogEntry } from "../../../src/ports/event-log.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import { createEchoProvider } from "../../../src/providers/scripted.js";
import {
  collect,
  createRuntimeHarness,
  textCommand,
  textOf,
  type RuntimeHarness,
  type RuntimeHarnessOptions,
} from "../../support/runtime-harness.js";
import { connectBothForFile } from "../../support/redis-store-factory.js";
import { withoutAnnouncements } from "../../support/unannouncing-store.js";

const { redis, cluster } = connectBothForFile();

const backends = [
  { name: "memory", options: {} },
  { name: "redis", options: { redis } },
  { name: "redis cluster", options: { redis: cluster } },
] satisfies { name: string; options: Partial<RuntimeHarnessOptions> }[];

/** A log that counts the appends the runtime makes itself (a commit's step is not one). */
function countingAppends(log: EventLog): EventLog & { appends: string[][] } {
  const appends: string[][] = [];
  return {
    ...log,
    appends,
    append(sessionId, entries, fence) {
      appends.push(entries.map((e) => e.event.type));
      return log.append(sessionId, entries, fence);
    },
  };
}

/** What a log entry shows a client, without its turn's id or the commit's own numbers. */
const shape = (e: LogEntry): string =>
  e.event.type === "text_delta" ? `text:${e.event.text}` : e.event.type;

const TEXT = "the same words on either path";

for (const backend of backends) {
  describe(`a turn's events in its commit on ${backend.name}`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    function harness(options: Partial<RuntimeHarnessOptions> = {}): RuntimeHarness {
      const h = createRuntimeHarness({
        provider: createEchoProvider(),
        ...backend.options,
        ...options,
      });
      cleanups.push(() => h.runtime.drain(1_000));
      return h;
    }

    it("an echo turn appends only its turn_started; its log is the write-then-commit path's", async () => {
      let counted: ReturnType<typeof countingAppends> | undefined;
      const folded = harness({ wrapLog: (log) => (counted = countingAppends(log)) });
      const sid = `fold-${randomUUID()}` as SessionId;
      const events = await collect(
        folded.runtime.streamTurn(textCommand(sid, TEXT), AbortSignal.timeout(10_000)),
      );
      expect(textOf(events)).toBe(TEXT);
      expect(counted?.appends).toEqual([["turn_started"]]);
      const entries = (await folded.log.read(sid, 0, 100)).entries;
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));

      // The same turn on a store that takes no announcement: its events written, then the commit.
      const written = harness({ wrapStore: withoutAnnouncements });
      const other = `written-${randomUUID()}` as SessionId;
      await collect(
        written.runtime.streamTurn(textCommand(other, TEXT), AbortSignal.timeout(10_000)),
      );
      const before = (await written.log.read(other, 0, 100)).entries;
      expect(entries.map(shape)).toEqual(before.map(shape));
      expect(entries.map(shape)).toEqual([
        "turn_started",
        `text:${TEXT}`,
        "usage_reported",
        "turn_completed",
      ]);
      // What the stream showed of each entry carries the entry's cursor in the log.
      const landed = events.filter((e) => e.event.type !== "text_delta").map((e) => e.cursor);
      const logged = entries.filter((e) => e.event.type !== "text_delta");
      expect(landed).toEqual(logged.map((e) => e.seq * 2 ** 20));
    });

    it("a commit that fails leaves none of the turn's held events; the re-run's land", async () => {
      const sid = `refused-${randomUUID()}` as SessionId;
      let seenAtFailure: LogEntry[] | undefined;
      const failOnce = (store: RuntimeStore): RuntimeStore =>
        new Proxy(store, {
          get(target, property, receiver) {
            if (property !== "commit") return Reflect.get(target, property, receiver) as unknown;
            return async (commit: Parameters<RuntimeStore["commit"]>[0]) => {
              if (seenAtFailure === undefined && commit.announce) {
                // Read when the commit is asked for: `h` exists by then.
                seenAtFailure = (await h.log.read(sid, 0, 100)).entries;
                throw new TetherError("store_unavailable", "store unavailable: test");
              }
              return target.commit(commit);
            };
          },
        });
      const h = harness({ wrapStore: failOnce, leaseTtlMs: 300 });
      const events = await collect(
        h.runtime.streamTurn(textCommand(sid, TEXT), AbortSignal.timeout(15_000)),
      );
      // The failed commit's turn wrote only its start: its text and usage were held for it.
      expect(seenAtFailure?.map(shape)).toEqual(["turn_started"]);
      expect(events.at(-1)?.event.type).toBe("turn_completed");
      // The client saw the first run start, then the re-run start after it, text and all ("A
      // re-run repeats the stream"): no cursor it was shown is numbered again.
      const starts = events.filter((e) => e.event.type === "turn_started");
      expect(starts.map((e) => e.cursor)).toEqual([2 ** 20, 2 * 2 ** 20]);
      expect(
        events.some((e) => e.event.type === "usage_reported" && e.cursor < starts[1]!.cursor),
      ).toBe(false);
      expect(textOf(events.slice(events.lastIndexOf(starts[1] as never)))).toBe(TEXT);
      const entries = (await h.log.read(sid, 0, 100)).entries;
      expect(entries.map(shape)).toEqual([
        "turn_started",
        "turn_started",
        `text:${TEXT}`,
        "usage_reported",
        "turn_completed",
      ]);
    });

    it("a watcher on another replica reads turn_started, the text and turn_completed in order", async () => {
      // Two replicas of one deployment: one memory store, or one Redis namespace.
      const namespace = `watched-${randomUUID()}`;
      const a = harness({ ownerId: "replica-a", namespace });
      const b = harness({
        ownerId: "replica-b",
        namespace,
        ...(backend.name === "memory" && { shareWith: a }),
      });
      const sid = `watched-${randomUUID()}` as SessionId;
      // A first turn makes the session; B watches from where it ended.
      await collect(a.runtime.streamTurn(textCommand(sid, "first"), AbortSignal.timeout(10_000)));
      const after = (await b.log.lastSeq(sid)) * 2 ** 20;
      const watched = collect(b.runtime.watch(sid, sid, after, true, AbortSignal.timeout(10_000)));
      const streamed = await collect(
        a.runtime.streamTurn(textCommand(sid, TEXT), AbortSignal.timeout(10_000)),
      );
      const seen = await watched;
      expect(seen.map((e) => e.event.type)).toEqual([
        "turn_started",
        "text_delta",
        "usage_reported",
        "turn_completed",
      ]);
      expect(textOf(seen)).toBe(TEXT);
      const cursors = seen.map((e) => e.cursor);
      expect(cursors).toEqual([...cursors].sort((x, y) => x - y));
      // The driving replica's client saw the same entries at the same cursors.
      const entryCursors = (events: typeof seen) =>
        events.filter((e) => e.event.type !== "text_delta").map((e) => e.cursor);
      expect(entryCursors(streamed)).toEqual(entryCursors(seen));
    });
  });
}
