// What reaches the front door (ADR 0037): `/v1` paths only, never a gRPC or Connect path; and the
// server-chosen agent ids sort newest first, so the default list order is the store's own.
import { describe, expect, it } from "vitest";
import { newAgentId } from "../../../src/agents-api/agent-ids.js";
import { isFrontDoorPath } from "../../../src/server/listeners.js";

describe("the front door's share of the port", () => {
  it("takes /v1 and what is under it, and leaves every RPC path to Connect", () => {
    for (const path of ["/v1", "/v1/", "/v1/agents", "/v1?x=1", "/v1/agents/sessions/s/events"]) {
      expect(isFrontDoorPath(path), path).toBe(true);
    }
    for (const path of [
      "/tether.v1.TurnService/StreamTurn",
      "/grpc.health.v1.Health/Check",
      "/v10/agents",
      "/v1agents",
      "/",
      undefined,
    ]) {
      expect(isFrontDoorPath(path), String(path)).toBe(false);
    }
  });
});

describe("agent ids", () => {
  it("sort newest first, also within one millisecond, and fit a client session id", () => {
    const ids = [newAgentId(1_000), newAgentId(1_000), newAgentId(2_000), newAgentId(90_000_000)];
    expect([...ids].sort()).toEqual([...ids].reverse());
    for (const id of ids) expect(id).toMatch(/^agent_[a-z0-9]{21}$/u);
  });
});
