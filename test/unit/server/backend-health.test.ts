import { describe, expect, it } from "vitest";
import {
  createHealthState,
  LIVENESS_SERVICE,
  ServingStatus,
} from "../../../src/api/health-service.js";
import { watchBackendHealth } from "../../../src/server/backend-health.js";
import { createLogger } from "../../../src/server/logger.js";
import { waitFor } from "../../support/wait-for.js";

/** The whole server ("") and an API service report `status`; liveness stays SERVING. */
function expectReadiness(health: ReturnType<typeof createHealthState>, status: ServingStatus) {
  expect(health.get("")).toBe(status);
  expect(health.get("tether.v1.TurnService")).toBe(status);
  // Liveness is process health: a Redis outage must not restart the replica.
  expect(health.get(LIVENESS_SERVICE)).toBe(ServingStatus.SERVING);
}

/** A served health state watched against a backend the test switches on and off. */
function watchSwitchableBackend(reachableAtStart: boolean) {
  const health = createHealthState(["tether.v1.TurnService"]);
  health.setAll(ServingStatus.SERVING);
  const backend = { reachable: reachableAtStart, pings: 0 };
  const watcher = watchBackendHealth({
    ping: () => {
      backend.pings++;
      return backend.reachable
        ? Promise.resolve()
        : Promise.reject(new Error("connection refused"));
    },
    health,
    logger: createLogger({ level: "silent" }),
    intervalMs: 20,
    draining: new AbortController().signal,
    initiallyReachable: reachableAtStart,
  });
  return { health, backend, watcher };
}

describe("backend health", () => {
  it("reports NOT_SERVING while the backend is unreachable and SERVING once it answers again", async () => {
    const { health, backend, watcher } = watchSwitchableBackend(true);
    try {
      backend.reachable = false;
      await waitFor(() => health.get("") === ServingStatus.NOT_SERVING, {
        what: "the unreachable backend to be reported",
      });
      expectReadiness(health, ServingStatus.NOT_SERVING);
      backend.reachable = true;
      await waitFor(() => health.get("") === ServingStatus.SERVING, {
        what: "the answering backend to be reported",
      });
      expectReadiness(health, ServingStatus.SERVING);
    } finally {
      watcher.stop();
    }
  });

  it("starts NOT_SERVING when the backend did not answer at start, and serves once it does", async () => {
    const { health, backend, watcher } = watchSwitchableBackend(false);
    try {
      // Before the first check: no window in which a load balancer sees SERVING.
      expectReadiness(health, ServingStatus.NOT_SERVING);
      // Checks that fail leave it so.
      const pinged = backend.pings;
      await waitFor(() => backend.pings >= pinged + 2, { what: "two failed checks" });
      expectReadiness(health, ServingStatus.NOT_SERVING);
      backend.reachable = true;
      await waitFor(() => health.get("") === ServingStatus.SERVING, {
        what: "the answering backend to be reported",
      });
      expectReadiness(health, ServingStatus.SERVING);
    } finally {
      watcher.stop();
    }
  });

  it("leaves health alone once draining has started", async () => {
    const health = createHealthState();
    health.setAll(ServingStatus.NOT_SERVING);
    const draining = new AbortController();
    draining.abort();
    // A backend that answers: without the drain, the watcher would report SERVING.
    const watcher = watchBackendHealth({
      ping: () => Promise.resolve(),
      health,
      logger: createLogger({ level: "silent" }),
      intervalMs: 20,
      draining: draining.signal,
      initiallyReachable: false,
    });
    // The same watch without the drain, started after it: once it serves, the draining one's
    // timer (due first at each tick) has checked as often.
    const control = watchSwitchableBackend(false);
    control.backend.reachable = true;
    try {
      await waitFor(() => control.health.get("") === ServingStatus.SERVING, {
        what: "the undrained watch to serve",
      });
      expect(health.get("")).toBe(ServingStatus.NOT_SERVING);
    } finally {
      watcher.stop();
      control.watcher.stop();
    }
  });
});
