// Which Redis scripts wait for replicas in replicated mode. The table is exhaustive by type; this
// pins the classification, so moving an operation in or out of "acknowledging" is a visible change.
import { describe, expect, test } from "vitest";
import {
  ACKNOWLEDGING_SCRIPTS,
  readMarkKey,
  SCRIPT_WRITE_CLASS,
} from "../../../src/store/redis/durability.js";
import { SCRIPT_NAMES } from "../../../src/store/redis/scripts.js";

describe("the durability table", () => {
  test("classifies every script", () => {
    expect(Object.keys(SCRIPT_WRITE_CLASS).sort()).toEqual([...SCRIPT_NAMES].sort());
  });

  test("acknowledging: what a client is promised or what keeps other writers out", () => {
    expect([...ACKNOWLEDGING_SCRIPTS].sort()).toEqual([
      "answerToolCalls",
      "cancelInputs",
      "cancelParkedTurn",
      "cancelWork",
      "claimIdempotencyKey",
      "claimInputs",
      "claimLease",
      "claimReadyWork",
      "claimWorkByIds",
      "closeToolCalls",
      "commit",
      "createAgent",
      "createSchedule",
      "createWebhookEndpoint",
      "deferActiveInputs",
      "deleteAgent",
      "deleteSchedule",
      "deleteSession",
      "deleteWebhookEndpoint",
      "enqueueWork",
      "forkSession",
      "parkTurn",
      "pauseSchedule",
      "reclaimLease",
      "recordToolCalls",
      "renewLease",
      "renewLeases",
      "resumeTurn",
      "rewindSession",
      "runScheduleNow",
      "startTurn",
      "submitInput",
      "unpauseSchedule",
      "updateAgent",
      "updateSchedule",
      "updateWebhookEndpoint",
    ]);
  });

  test("confirmed reads: what a client was acknowledged; the log and counters are never waited", () => {
    const of = (kind: string) =>
      Object.entries(SCRIPT_WRITE_CLASS)
        .filter(([, k]) => k === kind)
        .map(([name]) => name)
        .sort();
    expect(of("read")).toEqual([
      "getAgent",
      "listInputs",
      "listWork",
      "loadSession",
      "readLease",
      "readParkedTurn",
      "readRevision",
      "readSessionSummary",
      "readToolCalls",
      "readTurn",
      "readTurns",
      "readWebhookEndpoints",
      "readWebhookEndpointsSince",
    ]);
    expect(of("internal-read")).toEqual([
      "checkTokenQuota",
      "countStorageSlots",
      "listWebhookDeliveries",
      "readDueSchedules",
      "readEvents",
      "readQuotaUsage",
    ]);
  });

  test("a read's mark shares the slot of the key it read", () => {
    expect(readMarkKey("tether:{s-1}:head")).toBe("tether:{s-1}:read-mark");
    expect(readMarkKey("tether:{agent:a}:versions")).toBe("tether:{agent:a}:read-mark");
    // No hash tag: the whole key becomes the tag, which hashes to the key's own slot.
    expect(readMarkKey("tether:sessions")).toBe("{tether:sessions}:read-mark");
  });
});
