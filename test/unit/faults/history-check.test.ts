// The fault suite's history checker on small hand-written histories: each bad one must be caught
// with the right kind, each good one (overlaps in either order, unknown outcomes that did or did
// not land) must pass. Times are literal milliseconds.
import { describe, expect, it } from "vitest";
import { checkHistory, type ViolationKind } from "../../faults/history/check.js";
import {
  createHistoryRecorder,
  inputsByRevision,
  type FinalSession,
  type HistoryEvent,
  type Observation,
  type OperationKind,
} from "../../faults/history/record.js";

const S = "s1";

/** A history built by hand: op(kind, token, invokeAt, outcome, completeAt, value). */
function history() {
  const events: HistoryEvent[] = [];
  let next = 0;
  const op = (
    kind: OperationKind,
    token: string | undefined,
    invokeAt: number,
    type: "ok" | "fail" | "unknown" | "open",
    completeAt = invokeAt + 1,
    value?: Observation,
  ) => {
    const id = next++;
    events.push({
      type: "invoke",
      op: id,
      process: 0,
      at: invokeAt,
      kind,
      session: S,
      ...(token !== undefined && { token, requestId: `req-${token}` }),
    });
    if (type !== "open") {
      events.push({ type, op: id, at: completeAt, ...(value && { value }) });
    }
    return id;
  };
  return { events, op };
}

/** The final session: revision 1 is the creation, then one revision per entry of `turns`. */
function final(turns: string[][]): FinalSession[] {
  return [
    {
      session: S,
      head: turns.length + 1,
      revisions: [
        { revision: 1, tokens: [] },
        ...turns.map((tokens, i) => ({ revision: i + 2, tokens })),
      ],
    },
  ];
}

const kinds = (events: HistoryEvent[], turns: string[][]): ViolationKind[] =>
  checkHistory(events, final(turns)).violations.map((v) => v.kind);

describe("history checker: histories that must fail", () => {
  it("finds an acknowledged input missing from the final history (a lost write)", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 5);
    h.op("submit", "B", 1, "ok", 6);
    const report = checkHistory(h.events, final([["B"]]));
    expect(report.violations).toHaveLength(1);
    expect(report.violations[0]).toMatchObject({
      kind: "lost",
      token: "A",
      session: "s1",
      ops: [0],
    });
    expect(report.violations[0]?.detail).toContain("acknowledged by op 0 at 5.0ms");
  });

  it("finds an input committed twice (a duplicate), also when its submission was retried", () => {
    const h = history();
    h.op("submit", "A", 0, "unknown", 5);
    h.op("submit", "A", 10, "ok", 15);
    const report = checkHistory(h.events, final([["A"], ["A"]]));
    expect(report.violations.map((v) => v.kind)).toEqual(["duplicated"]);
    expect(report.violations[0]?.detail).toBe("A committed 2 times: s1@2[0], s1@3[0]");
  });

  it("finds a submission acknowledged before another was invoked but committed after it", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 10);
    h.op("submit", "B", 20, "ok", 30);
    const report = checkHistory(h.events, final([["B"], ["A"]]));
    expect(report.violations.map((v) => v.kind)).toEqual(["real_time_order"]);
    expect(report.violations[0]).toMatchObject({ token: "B", ops: [0, 1] });
  });

  it("finds the same reordering inside one revision", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 10);
    h.op("submit", "B", 20, "ok", 30);
    expect(kinds(h.events, [["B", "A"]])).toEqual(["real_time_order"]);
  });

  it("finds a reordering against an input acknowledged long before (not only the latest)", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 10);
    h.op("submit", "B", 20, "ok", 30);
    h.op("submit", "C", 40, "unknown", 50);
    // C may have landed, but not before A and B, both acknowledged before C was invoked.
    expect(kinds(h.events, [["C"], ["A"], ["B"]])).toEqual(["real_time_order"]);
  });

  it("finds a read that observed a revision later rolled back", () => {
    const h = history();
    h.op("submit", "A", 0, "unknown", 10);
    h.op("submit", "B", 0, "ok", 10);
    h.op("read", undefined, 20, "ok", 25, {
      head: 2,
      revisions: [
        { revision: 1, tokens: [] },
        { revision: 2, tokens: ["A"] },
      ],
    });
    const report = checkHistory(h.events, final([["B"]]));
    expect(report.violations.map((v) => v.kind)).toEqual(["rolled_back_read"]);
    expect(report.violations[0]?.detail).toContain(
      "saw revision 2 holding [A]; the final history holds [B] there",
    );
  });

  it("finds a read of a head beyond the final one", () => {
    const h = history();
    h.op("read", undefined, 20, "ok", 25, { head: 3, revisions: [] });
    expect(kinds(h.events, [["A"]])).toEqual(["unknown_input", "rolled_back_read"]);
  });

  it("finds a stream that announced an input at a revision the final history has otherwise", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 5, { inputId: "i1" });
    h.op("await", "A", 5, "ok", 9, { turnId: "t1", headRevision: 2 });
    expect(kinds(h.events, [["B"], ["A"]])).toEqual(["unknown_input", "rolled_back_read"]);
  });

  it("finds a stale read: one invoked after head 3 was seen returns head 2", () => {
    const h = history();
    h.op("read", undefined, 0, "ok", 10, { head: 3 });
    h.op("read", undefined, 20, "ok", 25, { head: 2 });
    const report = checkHistory(h.events, final([[], []]));
    expect(report.violations.map((v) => v.kind)).toEqual(["stale_read"]);
    expect(report.violations[0]?.ops).toEqual([0, 1]);
  });

  it("finds a stale read after a stream saw its turn complete at a later revision", () => {
    const h = history();
    h.op("await", "A", 0, "ok", 10, { headRevision: 2 });
    h.op("submit", "A", 0, "ok", 1);
    h.op("read", undefined, 20, "ok", 25, { head: 1 });
    expect(kinds(h.events, [["A"]])).toEqual(["stale_read"]);
  });

  it("finds a fencing token going backwards between reads in real-time order", () => {
    const h = history();
    h.op("read", undefined, 0, "ok", 10, { head: 1, fencingToken: 5 });
    h.op("read", undefined, 20, "ok", 25, { head: 1, fencingToken: 4 });
    const report = checkHistory(h.events, final([]));
    expect(report.violations).toEqual([
      {
        kind: "fencing_regressed",
        session: "s1",
        ops: [0, 1],
        detail:
          "op 1 (invoked 20.0ms) saw fencing token 4, but op 0 had already seen 5 (completed 10.0ms)",
      },
    ]);
  });

  it("finds an input committed although every submission was refused", () => {
    const h = history();
    h.op("submit", "A", 0, "fail", 5);
    h.op("submit", "A", 10, "fail", 15);
    expect(kinds(h.events, [["A"]])).toEqual(["failed_but_applied"]);
  });

  it("finds an input no client submitted, and one committed to another session", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 5);
    const other: FinalSession = {
      session: "s2",
      head: 2,
      revisions: [{ revision: 2, tokens: ["A"] }],
    };
    const report = checkHistory(h.events, [...final([["Z"]]), other]);
    expect(report.violations.map((v) => v.kind)).toEqual([
      "unknown_input",
      "unknown_input",
      "lost",
    ]);
  });

  it("finds a malformed history: two completions, one before its invoke, one never invoked", () => {
    const events: HistoryEvent[] = [
      { type: "invoke", op: 0, process: 0, at: 10, kind: "read", session: S },
      { type: "ok", op: 0, at: 5 },
      { type: "ok", op: 0, at: 12 },
      { type: "unknown", op: 0, at: 13 },
      { type: "ok", op: 7, at: 1 },
    ];
    expect(kinds(events, [])).toEqual([
      "malformed_history",
      "malformed_history",
      "malformed_history",
    ]);
  });

  it("reports at most maxViolations and counts the rest", () => {
    const h = history();
    for (let i = 0; i < 5; i++) h.op("submit", `T${i}`, i, "ok", i + 1);
    const report = checkHistory(h.events, final([]), { maxViolations: 2 });
    expect(report.violations.map((v) => v.token)).toEqual(["T0", "T1"]);
    expect(report.omitted).toBe(3);
  });
});

describe("history checker: histories that must pass", () => {
  it("accepts overlapping submissions committed in either order", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 30);
    h.op("submit", "B", 10, "ok", 20);
    expect(kinds(h.events, [["A"], ["B"]])).toEqual([]);
    expect(kinds(h.events, [["B"], ["A"]])).toEqual([]);
    expect(kinds(h.events, [["B", "A"]])).toEqual([]);
  });

  it("accepts an input whose first attempt's outcome is unknown and a later attempt lands it", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 5);
    h.op("submit", "B", 10, "unknown", 15);
    h.op("submit", "B", 20, "ok", 25);
    expect(kinds(h.events, [["A"], ["B"]])).toEqual([]);
  });

  it("accepts an unknown or never-completed submission that took effect, and one that did not", () => {
    const h = history();
    h.op("submit", "A", 0, "unknown", 5);
    h.op("submit", "B", 0, "open");
    h.op("submit", "C", 0, "unknown", 5);
    h.op("submit", "D", 0, "open");
    const report = checkHistory(h.events, final([["A"], ["B"]]));
    expect(report.violations).toEqual([]);
    expect(report.inputs).toEqual({ submitted: 4, acknowledged: 0, committed: 2 });
    expect(report.outcomes.submit).toEqual({ ok: 0, fail: 0, unknown: 2, open: 2 });
  });

  it("accepts an unknown submission invoked before an acknowledgement landing before it", () => {
    const h = history();
    h.op("submit", "U", 0, "unknown", 50);
    h.op("submit", "A", 10, "ok", 20);
    expect(kinds(h.events, [["U"], ["A"]])).toEqual([]);
    expect(kinds(h.events, [["A"], ["U"]])).toEqual([]);
  });

  it("accepts a refused submission that did not take effect", () => {
    const h = history();
    h.op("submit", "A", 0, "fail", 5);
    expect(kinds(h.events, [])).toEqual([]);
  });

  it("accepts reads that are prefixes of the final history, and concurrent reads in either order", () => {
    const h = history();
    h.op("submit", "A", 0, "ok", 5);
    h.op("await", "A", 5, "ok", 9, { headRevision: 2 });
    h.op("read", undefined, 10, "ok", 40, {
      head: 2,
      fencingToken: 7,
      revisions: [
        { revision: 1, tokens: [] },
        { revision: 2, tokens: ["A"] },
      ],
    });
    // Overlaps the first read: it may see an older head and fencing token.
    h.op("read", undefined, 20, "ok", 30, { head: 2, fencingToken: 6 });
    h.op("read", undefined, 50, "ok", 60, { head: 3, fencingToken: 7 });
    h.op("submit", "B", 45, "ok", 48);
    expect(kinds(h.events, [["A"], ["B"]])).toEqual([]);
  });

  it("ignores what failed or unknown reads returned", () => {
    const h = history();
    h.op("read", undefined, 0, "ok", 10, { head: 1, fencingToken: 5 });
    h.op("read", undefined, 20, "unknown", 25, { head: 0, fencingToken: 1 });
    expect(kinds(h.events, [])).toEqual([]);
  });
});

describe("history recorder", () => {
  it("keeps the first completion of an operation and times events on its clock", () => {
    let t = 100;
    const recorder = createHistoryRecorder(() => t);
    t = 103;
    const op = recorder.invoke({ process: 2, kind: "submit", session: S, token: "A" });
    t = 110;
    op.ok({ inputId: "i1" });
    t = 111;
    op.unknown("Unavailable: gone");
    expect(recorder.events).toEqual([
      { type: "invoke", op: 0, at: 3, process: 2, kind: "submit", session: S, token: "A" },
      { type: "ok", op: 0, at: 10, value: { inputId: "i1" } },
    ]);
  });

  it("reads committed tokens per revision from user messages only", () => {
    const a = `tok${"a".repeat(32)}`;
    const b = `tok${"b".repeat(32)}`;
    expect(
      inputsByRevision(3, [
        { user: true, revision: 2, texts: [`say ${a}`] },
        { user: false, revision: 2, texts: [`say ${a}`] },
        { user: true, revision: 3, texts: [`/tool lookup {"token":"${b}"}`] },
      ]),
    ).toEqual([
      { revision: 1, tokens: [] },
      { revision: 2, tokens: [a] },
      { revision: 3, tokens: [b] },
    ]);
  });
});
