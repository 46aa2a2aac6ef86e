// The real server for the front door's automation tests: a runtime on a memory store (an echo
// model), a memory schedule store on a manual clock the test moves, and the schedule poller
// driven by hand (`poll`), so a cron minute passes without waiting for it. The door's automations
// and gRPC's ScheduleService share the schedule actions, as main.ts wires them.
import { createClient } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import { createAgentService } from "../../../src/api/agent-service.js";
import { createScheduleActions } from "../../../src/api/schedule-actions.js";
import { createScheduleService } from "../../../src/api/schedule-service.js";
import { createSessionService } from "../../../src/api/session-service.js";
import { AgentService } from "../../../src/gen/tether/v1/agent_service_pb.js";
import { ScheduleService } from "../../../src/gen/tether/v1/schedule_service_pb.js";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { createManualClock, type ManualClock } from "../../../src/ports/clock.js";
import { createModelProvider } from "../../../src/providers/index.js";
import { silentLogger } from "../../../src/runtime/deps.js";
import { createScheduleFirer, startScheduler } from "../../../src/runtime/index.js";
import type { MemoryStore } from "../../../src/store/memory/memory-store.js";
import { createMemoryScheduleStore } from "../../../src/store/memory/schedule-ops.js";
import { startApiServer, type ApiServerHarness } from "../../support/api-server.js";
import { createRuntimeHarness, type RuntimeHarness } from "../../support/runtime-harness.js";

export const START = Date.parse("2026-03-01T10:00:30Z");

export interface AutomationDoor {
  server: ApiServerHarness;
  rt: RuntimeHarness;
  /** The schedules' clock (the poller's and the door's "now"). */
  clock: ManualClock;
  sdk: OpenAI;
  schedules: ReturnType<typeof createClient<typeof ScheduleService>>;
  sessions: ReturnType<typeof createClient<typeof SessionService>>;
  /** One round of the schedule poller: fires every due occurrence once. */
  poll(): Promise<void>;
  close(): Promise<void>;
}

export async function startAutomationDoor(): Promise<AutomationDoor> {
  const rt = createRuntimeHarness({ provider: createModelProvider({ kind: "echo" }) });
  const clock = createManualClock(START);
  const scheduleStore = createMemoryScheduleStore({ clock });
  const scheduler = startScheduler(
    {
      schedules: scheduleStore,
      firer: createScheduleFirer(rt.deps, rt.runtime.driver),
      deps: { sleep: rt.deps.sleep, logger: silentLogger },
    },
    false,
  );
  const scheduleOptions = { schedules: scheduleStore, store: rt.store, clock };
  const server = await startApiServer({
    store: rt.store as MemoryStore,
    runtime: rt.runtime,
    schedules: createScheduleActions(scheduleOptions),
    routes: (router) => {
      router.service(ScheduleService, createScheduleService(scheduleOptions));
      router.service(SessionService, createSessionService({ store: rt.store }));
      router.service(AgentService, createAgentService(rt.store));
    },
  });
  return {
    server,
    rt,
    clock,
    sdk: new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: "any-key", maxRetries: 0 }),
    schedules: createClient(ScheduleService, server.transport),
    sessions: createClient(SessionService, server.transport),
    poll: async () => {
      await scheduler.pollOnce();
    },
    close: async () => {
      await scheduler.stop();
      await server.close();
      await rt.runtime.drain(1_000);
    },
  };
}
