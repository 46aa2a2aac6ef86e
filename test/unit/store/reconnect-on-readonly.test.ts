// Which Redis errors make a Sentinel connection reconnect and send the command again: only a
// READONLY refusal (the old primary after a failover), which ran nothing.
import { describe, expect, test } from "vitest";
import { reconnectOnReadonly } from "../../../src/store/redis/connections.js";

describe("reconnectOnReadonly", () => {
  test.each([
    ["READONLY You can't write against a read only replica.", 2],
    ["ERR Error running script (call to f_1): @user_script:12: READONLY You can't write", 2],
    ["NOSCRIPT No matching script", false],
    ["LOADING Redis is loading the dataset in memory", false],
    ["ERR wrong number of arguments", false],
  ])("%s -> %s", (message, expected) => {
    expect(reconnectOnReadonly(new Error(message))).toBe(expected);
  });
});
