// The real server for the front door's tests: a memory store on a manual clock, AgentService on
// the gRPC side over that same store, so one test can cross the HTTP and gRPC doors.
import { createAgentService } from "../../../src/api/agent-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { createManualClock, type ManualClock } from "../../../src/ports/clock.js";
import { createMemoryStore } from "../../../src/store/memory/memory-store.js";
import { createProcLivenessProbe } from "../../../src/store/shared/local-process.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";

export interface DoorServer extends ApiServerHarness {
  /** The store's clock (the harness's own clock is not the store's when the store is given). */
  storeClock: ManualClock;
}

export async function startDoorServer(env: Record<string, string> = {}): Promise<DoorServer> {
  const storeClock = createManualClock();
  const store = createMemoryStore({ clock: storeClock, livenessProbe: createProcLivenessProbe() });
  const harness = await startApiServer({
    env,
    store,
    routes: (router) => router.service(AgentService, createAgentService(store)),
  });
  return { ...harness, storeClock };
}
