// Which Redis scripts wait for replicas in replicated mode. The table is exhaustive by type; this
// pins the classification, so moving an operation in or out of "acknowledging" is a visible change.
import { describe, expect, test } from "vitest";
import { ACKNOWLEDGING_SCRIPTS, SCRIPT_WRITE_CLASS } from "../../../src/store/redis/durability.js";
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
});
