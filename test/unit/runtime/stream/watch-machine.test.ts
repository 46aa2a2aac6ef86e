// The watch's state machine, transition by transition: each case gives a state and an input and
// expects the literal next state and actions (ADR 0005, "The watch as a state machine").
import { describe, expect, it } from "vitest";
import type { CursoredEvent, SessionEvent } from "../../../../src/domain/session-events.js";
import type { LogEntry } from "../../../../src/ports/event-log.js";
import {
  initialWatchState,
  transition,
  type WatchState,
} from "../../../../src/runtime/stream/watch-machine.js";

const M = 2 ** 20;

/** A live watch that waits on the log with nothing armed yet, standing at `cursor`. */
function state(overrides: Partial<WatchState> = {}): WatchState {
  return {
    phase: "live_log_and_bus",
    resume: "live_log_and_bus",
    publicSessionId: "pub",
    cursor: 2 * M,
    logSeq: 2,
    requested: 0,
    lastLiveDelta: -1,
    behind: false,
    readDue: false,
    logWaitArmed: false,
    offerPending: false,
    readAfterStop: false,
    ...overrides,
  };
}

const usage: SessionEvent = { type: "turn_started", inputIds: ["i"], turnIndex: 1 };
const entry = (seq: number, event: SessionEvent = usage): LogEntry =>
  ({ seq, turnId: "t", event }) as LogEntry;
const delta = (text: string): SessionEvent => ({ type: "text_delta", text });
const onBus = (cursor: number, event: SessionEvent): CursoredEvent => ({
  cursor,
  sessionId: "internal",
  turnId: "t",
  event,
});
const delivered = (cursor: number, event: SessionEvent = usage) => ({
  kind: "deliver",
  event: { cursor, sessionId: "pub", turnId: "t", event },
});
const idle = { kind: "idle", drivenHere: false, stopped: false } as const;

describe("starting", () => {
  it("begins at the cursor asked for, its first read to come", () => {
    expect(
      initialWatchState({ publicSessionId: "pub", afterCursor: 3 * M + 5, driveOffered: true }),
    ).toEqual(
      state({
        phase: "starting",
        cursor: 3 * M + 5,
        logSeq: 3,
        requested: 3 * M + 5,
        offerPending: true,
      }),
    );
  });

  it("reads the log from where it was told to start", () => {
    const step = transition(state({ phase: "starting" }), {
      kind: "started",
      cursor: 5 * M,
      readLog: true,
    });
    expect(step).toEqual({
      state: state({ phase: "starting", cursor: 5 * M, requested: 5 * M, logSeq: 5 }),
      actions: [{ kind: "read_log", afterSeq: 5 }],
    });
  });

  it("goes live without a read when the caller read the log's end after it subscribed", () => {
    const step = transition(state({ phase: "starting" }), {
      kind: "started",
      cursor: 5 * M,
      readLog: false,
    });
    expect(step).toEqual({
      state: state({ cursor: 5 * M, requested: 5 * M, logSeq: 5 }),
      actions: [],
    });
  });

  it("delivers what the first read brought and goes live", () => {
    const step = transition(state({ phase: "starting" }), {
      kind: "log_read",
      entries: [entry(3), entry(4)],
      firstRetainedSeq: 1,
    });
    expect(step).toEqual({
      state: state({ cursor: 4 * M, logSeq: 4 }),
      actions: [delivered(3 * M), delivered(4 * M)],
    });
  });

  it("reports a gap when the log no longer holds what the client asked for, then goes on", () => {
    const step = transition(state({ phase: "starting", cursor: 2 * M + 7, requested: 2 * M + 7 }), {
      kind: "log_read",
      entries: [entry(9)],
      firstRetainedSeq: 9,
    });
    expect(step).toEqual({
      state: state({ cursor: 9 * M, logSeq: 9, requested: 2 * M + 7 }),
      actions: [
        {
          kind: "report_gap",
          cursor: 2 * M + 7,
          requestedAfterCursor: 2 * M + 7,
          retainedFromCursor: 9 * M,
        },
        delivered(9 * M),
      ],
    });
  });

  it("reports no gap for a log that starts right after the client", () => {
    const step = transition(state({ phase: "starting" }), {
      kind: "log_read",
      entries: [],
      firstRetainedSeq: 3,
    });
    expect(step).toEqual({ state: state(), actions: [] });
  });

  it("marks a read due after a full first batch", () => {
    const entries = Array.from({ length: 256 }, (_, i) => entry(3 + i));
    const step = transition(state({ phase: "starting" }), {
      kind: "log_read",
      entries,
      firstRetainedSeq: 1,
    });
    expect(step.state).toEqual(state({ cursor: 258 * M, logSeq: 258, readDue: true }));
    expect(step.actions).toHaveLength(256);
  });
});

describe("catching up", () => {
  it("returns to the live phase it left, delivering only what the client lacks", () => {
    const step = transition(
      state({ phase: "catching_up", resume: "live_bus_only", cursor: 3 * M }),
      {
        kind: "log_read",
        entries: [entry(3), entry(4)],
        firstRetainedSeq: 1,
      },
    );
    expect(step).toEqual({
      state: state({ phase: "live_bus_only", resume: "live_bus_only", cursor: 4 * M, logSeq: 4 }),
      actions: [delivered(4 * M)],
    });
  });

  it("never reports a gap after the first read", () => {
    const step = transition(state({ phase: "catching_up" }), {
      kind: "log_read",
      entries: [],
      firstRetainedSeq: 8,
    });
    expect(step).toEqual({ state: state(), actions: [] });
  });

  it("waits for its read when told it is idle", () => {
    const step = transition(state({ phase: "catching_up" }), idle);
    expect(step).toEqual({ state: state({ phase: "catching_up" }), actions: [{ kind: "wait" }] });
  });
});

describe("taking events off the bus", () => {
  it("delivers an event that follows, under the client's session id", () => {
    const step = transition(state(), { kind: "bus", event: onBus(3 * M, usage) });
    expect(step).toEqual({ state: state({ cursor: 3 * M }), actions: [delivered(3 * M)] });
  });

  it("skips an event the client has", () => {
    const step = transition(state(), { kind: "bus", event: onBus(2 * M, usage) });
    expect(step).toEqual({ state: state(), actions: [] });
  });

  it("holds back an event past a missing entry: the watch is behind", () => {
    const step = transition(state(), { kind: "bus", event: onBus(4 * M, usage) });
    expect(step).toEqual({ state: state({ behind: true }), actions: [] });
  });

  it("delivers a live delta that continues where the client stands", () => {
    const step = transition(state({ cursor: 2 * M + 3 }), {
      kind: "bus",
      event: onBus(2 * M + 5, delta("de")),
    });
    expect(step).toEqual({
      state: state({ cursor: 2 * M + 5, lastLiveDelta: 2 * M + 5 }),
      actions: [delivered(2 * M + 5, delta("de"))],
    });
  });

  it("holds back a live delta after a missed piece", () => {
    const step = transition(state({ cursor: 2 * M + 3 }), {
      kind: "bus",
      event: onBus(2 * M + 9, delta("xy")),
    });
    expect(step).toEqual({
      state: state({ cursor: 2 * M + 3, lastLiveDelta: 2 * M + 9, behind: true }),
      actions: [],
    });
  });

  it("delivers only the rest of a landed window the client saw in part", () => {
    const step = transition(state({ cursor: 2 * M + 3 }), {
      kind: "bus",
      event: onBus(3 * M, delta("abcdef")),
    });
    expect(step).toEqual({
      state: state({ cursor: 3 * M, lastLiveDelta: 3 * M }),
      actions: [delivered(3 * M, delta("def"))],
    });
  });

  it("delivers nothing for a landed window the client saw whole", () => {
    const step = transition(state({ cursor: 2 * M + 3 }), {
      kind: "bus",
      event: onBus(3 * M, delta("abc")),
    });
    expect(step).toEqual({ state: state({ cursor: 3 * M, lastLiveDelta: 3 * M }), actions: [] });
  });

  it("takes a delta opening a new window when the last live piece closed the client's", () => {
    const step = transition(state({ cursor: 2 * M + 4, lastLiveDelta: 2 * M + 4 }), {
      kind: "bus",
      event: onBus(3 * M + 2, delta("ef")),
    });
    expect(step).toEqual({
      state: state({ cursor: 3 * M + 2, lastLiveDelta: 3 * M + 2 }),
      actions: [delivered(3 * M + 2, delta("ef"))],
    });
  });

  it("does not take that delta when the client's window was closed by the log, not the bus", () => {
    const step = transition(state({ cursor: 2 * M + 4 }), {
      kind: "bus",
      event: onBus(3 * M + 2, delta("ef")),
    });
    expect(step).toEqual({
      state: state({ cursor: 2 * M + 4, lastLiveDelta: 3 * M + 2, behind: true }),
      actions: [],
    });
  });
});

describe("what a log wait hands over", () => {
  it("delivers entries that continue the log from the watch", () => {
    const step = transition(state({ logWaitArmed: true }), {
      kind: "log_waited",
      entries: [entry(3)],
    });
    expect(step).toEqual({
      state: state({ cursor: 3 * M, logSeq: 3 }),
      actions: [delivered(3 * M)],
    });
  });

  it("marks a read due after a quiet poll", () => {
    const step = transition(state({ logWaitArmed: true }), {
      kind: "log_waited",
      entries: undefined,
    });
    expect(step).toEqual({ state: state({ readDue: true }), actions: [] });
  });

  it("marks a read due for entries that do not continue from the watch", () => {
    const step = transition(state({ logWaitArmed: true }), {
      kind: "log_waited",
      entries: [entry(5)],
    });
    expect(step).toEqual({ state: state({ readDue: true }), actions: [] });
  });

  it("marks a read due after a full batch", () => {
    const entries = Array.from({ length: 256 }, (_, i) => entry(3 + i));
    const step = transition(state({ logWaitArmed: true }), { kind: "log_waited", entries });
    expect(step).toEqual({ state: state({ readDue: true }), actions: [] });
  });

  it("skips entries the watch read already", () => {
    const step = transition(state({ logWaitArmed: true }), {
      kind: "log_waited",
      entries: [entry(2)],
    });
    expect(step).toEqual({ state: state(), actions: [] });
  });
});

describe("idle: choosing how to go on", () => {
  it("arms one blocking wait on the log for a session driven elsewhere", () => {
    expect(transition(state(), idle)).toEqual({
      state: state({ logWaitArmed: true }),
      actions: [{ kind: "arm_log_wait", afterSeq: 2 }, { kind: "wait" }],
    });
  });

  it("keeps the wait it armed instead of arming another", () => {
    expect(transition(state({ logWaitArmed: true }), idle)).toEqual({
      state: state({ logWaitArmed: true }),
      actions: [{ kind: "wait" }],
    });
  });

  it("waits on the bus alone once its replica drives the session", () => {
    expect(transition(state(), { ...idle, drivenHere: true })).toEqual({
      state: state({ phase: "live_bus_only" }),
      actions: [{ kind: "watch_lease_end" }, { kind: "wait" }],
    });
  });

  it("lets an armed log wait finish before it waits on the bus alone", () => {
    expect(transition(state({ logWaitArmed: true }), { ...idle, drivenHere: true })).toEqual({
      state: state({ logWaitArmed: true }),
      actions: [{ kind: "wait" }],
    });
  });

  it("keeps waiting on the bus alone while the replica drives", () => {
    expect(transition(state({ phase: "live_bus_only" }), { ...idle, drivenHere: true })).toEqual({
      state: state({ phase: "live_bus_only" }),
      actions: [{ kind: "wait" }],
    });
  });

  it("reads the log once when the session is no longer driven here", () => {
    expect(transition(state({ phase: "live_bus_only" }), idle)).toEqual({
      state: state({ phase: "catching_up", resume: "live_log_and_bus" }),
      actions: [{ kind: "unwatch_lease_end" }, { kind: "read_log", afterSeq: 2 }],
    });
  });

  it("reads the log when behind while waiting on the bus alone", () => {
    expect(
      transition(state({ phase: "live_bus_only", behind: true }), { ...idle, drivenHere: true }),
    ).toEqual({
      state: state({ phase: "catching_up", resume: "live_bus_only" }),
      actions: [{ kind: "read_log", afterSeq: 2 }],
    });
  });

  it("leaves it to the armed log wait when behind while waiting on the log", () => {
    expect(transition(state({ behind: true, logWaitArmed: true }), idle)).toEqual({
      state: state({ logWaitArmed: true }),
      actions: [{ kind: "wait" }],
    });
  });

  it("reads the log when a read is due", () => {
    expect(transition(state({ readDue: true }), idle)).toEqual({
      state: state({ phase: "catching_up" }),
      actions: [{ kind: "read_log", afterSeq: 2 }],
    });
  });

  it("makes one last read after a stop", () => {
    expect(transition(state({ logWaitArmed: true }), { ...idle, stopped: true })).toEqual({
      state: state({ phase: "catching_up", logWaitArmed: true, readAfterStop: true }),
      actions: [{ kind: "read_log", afterSeq: 2 }],
    });
  });

  it("ends after its last read", () => {
    expect(transition(state({ readAfterStop: true }), { ...idle, stopped: true })).toEqual({
      state: state({ phase: "ended", readAfterStop: true }),
      actions: [{ kind: "end" }],
    });
  });

  it("reads what is due before it ends", () => {
    expect(
      transition(state({ readAfterStop: true, readDue: true }), { ...idle, stopped: true }),
    ).toEqual({
      state: state({ phase: "catching_up", readAfterStop: true }),
      actions: [{ kind: "read_log", afterSeq: 2 }],
    });
  });

  it("waits for the drive offer before choosing how to wait", () => {
    expect(transition(state({ offerPending: true }), { ...idle, drivenHere: true })).toEqual({
      state: state({ phase: "awaiting_offer", offerPending: true }),
      actions: [{ kind: "await_drive_offer" }],
    });
  });
});

describe("the drive offer and the lease's end", () => {
  it("goes live once the offer was made", () => {
    expect(
      transition(state({ phase: "awaiting_offer", offerPending: true }), { kind: "drive_offered" }),
    ).toEqual({
      state: state(),
      actions: [],
    });
  });

  it("reads the log once when the hold it relied on ends", () => {
    expect(transition(state({ phase: "live_bus_only" }), { kind: "lease_ended" })).toEqual({
      state: state({ phase: "catching_up", resume: "live_log_and_bus" }),
      actions: [{ kind: "unwatch_lease_end" }, { kind: "read_log", afterSeq: 2 }],
    });
  });

  it("ignores the end of a hold it no longer relies on", () => {
    expect(transition(state({ logWaitArmed: true }), { kind: "lease_ended" })).toEqual({
      state: state({ logWaitArmed: true }),
      actions: [],
    });
  });
});

describe("ended", () => {
  it("takes no input", () => {
    const ended = state({ phase: "ended" });
    expect(transition(ended, { kind: "bus", event: onBus(3 * M, usage) })).toEqual({
      state: ended,
      actions: [],
    });
    expect(transition(ended, idle)).toEqual({ state: ended, actions: [] });
  });
});

describe("a StreamTurn's watch on the replica that drives its turn", () => {
  it("reads and waits on nothing but the bus until the lease ends, then reads the log once", () => {
    const inputs = [
      { kind: "started", cursor: 2 * M, readLog: false },
      { ...idle, drivenHere: false },
      { kind: "drive_offered" },
      { ...idle, drivenHere: true },
      { kind: "bus", event: onBus(3 * M, usage) },
      { kind: "bus", event: onBus(3 * M + 2, delta("hi")) },
      { ...idle, drivenHere: true },
      { kind: "bus", event: onBus(4 * M, delta("hi")) },
      { ...idle, drivenHere: true },
      { kind: "lease_ended" },
    ] as const;
    let current = initialWatchState({ publicSessionId: "pub", afterCursor: 0, driveOffered: true });
    const kinds: string[] = [];
    for (const input of inputs) {
      const step = transition(current, input);
      current = step.state;
      kinds.push(...step.actions.map((a) => a.kind));
    }
    expect(kinds).toEqual([
      "await_drive_offer",
      "watch_lease_end",
      "wait",
      "deliver",
      "deliver",
      "wait",
      "wait",
      "unwatch_lease_end",
      "read_log",
    ]);
    expect(current.phase).toBe("catching_up");
  });
});
