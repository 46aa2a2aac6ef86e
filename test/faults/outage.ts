// One long Redis outage after the workload. Redis is held down until every replica has reported
// NOT_SERVING and answered a StreamTurn call (which must fail with UNAVAILABLE), so no probe can
// race the restart. Once Redis is back, every replica must serve again and run a turn, without a
// restart.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Health,
  HealthCheckResponse_ServingStatus,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import type { RestartableRedis } from "./redis-servers.js";
import { waitFor } from "../support/wait-for.js";

export interface OutageReport {
  replicas: number;
  not_serving_while_down: number;
  unavailable_while_down: number;
  serving_after: number;
  turn_after: number;
  /** How long Redis was down. */
  down_ms: number;
  /** Per replica, how its StreamTurn call ended while Redis was down ("Unavailable" expected). */
  refusals: string[];
}

export async function probeOutage(
  redis: RestartableRedis,
  addresses: string[],
): Promise<OutageReport> {
  const report: OutageReport = {
    replicas: addresses.length,
    not_serving_while_down: 0,
    unavailable_while_down: 0,
    serving_after: 0,
    turn_after: 0,
    down_ms: 0,
    refusals: addresses.map(() => "not tried"),
  };
  const clients = addresses.map((baseUrl) => {
    const transport = createGrpcTransport({ baseUrl });
    return { health: createClient(Health, transport), turns: createClient(TurnService, transport) };
  });
  const status = async (i: number) =>
    (await clients[i]!.health.check({ service: "" }, { timeoutMs: 1_000 })).status;
  /** Whether replica `i` showed `ok` within 15 s (a failed call is asked again); counted, not thrown. */
  const within15s = (i: number, what: string, ok: () => Promise<boolean>): Promise<boolean> =>
    waitFor(() => ok().catch(() => false), {
      what: `replica ${i}: ${what}`,
      timeoutMs: 15_000,
      intervalMs: 100,
    }).then(
      () => true,
      () => false,
    );
  const runTurn = async (i: number, text: string): Promise<void> => {
    for await (const message of clients[i]!.turns.streamTurn(
      { sessionId: `outage-probe-${i}`, input: [{ kind: { case: "text", value: text } }] },
      { timeoutMs: 10_000 },
    )) {
      if (message.event?.event.case === "turnCompleted") return;
    }
    throw new Error("no turn_completed");
  };

  await redis.halt("SIGKILL");
  const downSince = Date.now();
  try {
    await Promise.all(
      clients.map(async (_, i) => {
        const down = await within15s(
          i,
          "NOT_SERVING",
          async () => (await status(i)) === HealthCheckResponse_ServingStatus.NOT_SERVING,
        );
        if (down) report.not_serving_while_down++;
        try {
          await runTurn(i, "while Redis is down");
          report.refusals[i] = "completed";
        } catch (error) {
          const code = error instanceof ConnectError ? Code[error.code] : "not a ConnectError";
          report.refusals[i] = `${code}: ${(error as Error).message}`.slice(0, 200);
          if (error instanceof ConnectError && error.code === Code.Unavailable) {
            report.unavailable_while_down++;
            report.refusals[i] = "Unavailable";
          }
        }
      }),
    );
  } finally {
    report.down_ms = Date.now() - downSince;
    await redis.start();
  }
  await Promise.all(
    clients.map(async (_, i) => {
      const up = await within15s(
        i,
        "SERVING",
        async () => (await status(i)) === HealthCheckResponse_ServingStatus.SERVING,
      );
      if (up) report.serving_after++;
      if (await within15s(i, "a turn", () => runTurn(i, "Redis is back").then(() => true))) {
        report.turn_after++;
      }
    }),
  );
  return report;
}
