// Clients of the Tether API for tests: the same routes through the in-memory router transport or
// through the real server, and an assertion on ConnectError codes.
import { Code, ConnectError, createRouterTransport, type Transport } from "@connectrpc/connect";
import { expect } from "vitest";
import { createHealthState } from "../../src/api/health-service.js";
import { BadRequestSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { createManualClock, type ManualClock } from "../../src/ports/clock.js";
import { createMemoryStore, type MemoryStore } from "../../src/store/memory/memory-store.js";
import { createProcLivenessProbe } from "../../src/store/shared/local-process.js";
import { createTetherInterceptors, createTetherRoutes } from "../../src/server/routes.js";
import { startApiServer } from "./api-server.js";

export interface ApiTarget {
  transport: Transport;
  store: MemoryStore;
  clock: ManualClock;
  close(): Promise<void>;
}

export async function routerTarget(): Promise<ApiTarget> {
  const clock = createManualClock();
  const store = createMemoryStore({ clock, livenessProbe: createProcLivenessProbe() });
  const transport = createRouterTransport(
    createTetherRoutes({ store, health: createHealthState() }),
    {
      router: {
        interceptors: createTetherInterceptors({
          apiKeys: undefined,
          requestTimeoutMs: 10_000,
          log: { error: () => undefined },
        }),
      },
    },
  );
  return { transport, store, clock, close: () => Promise.resolve() };
}

export async function serverTarget(): Promise<ApiTarget> {
  const h = await startApiServer();
  return { transport: h.transport, store: h.store, clock: h.clock, close: h.close };
}

export const TARGETS = [
  { name: "router transport", start: routerTarget },
  { name: "real server (gRPC over h2c)", start: serverTarget },
];

/** Awaits a rejection with `code` and returns the ConnectError. */
export async function expectCode(call: Promise<unknown>, code: Code): Promise<ConnectError> {
  let caught: unknown;
  try {
    await call;
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected the call to fail").toBeInstanceOf(ConnectError);
  const error = caught as ConnectError;
  expect(Code[error.code], error.message).toBe(Code[code]);
  return error;
}

export function violatedFields(error: ConnectError): string[] {
  return error.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations.map((v) => v.field));
}
