// Probe (issue 40, item 6): a client with no key opens hundreds of sockets that say nothing, or
// stop halfway through the HTTP/2 preface, to hold the server's file descriptors. They must be
// closed within the handshake timeout, and another tenant's calls answered meanwhile. Before the
// connection limits every one of them was still open a minute later.
import { readdirSync } from "node:fs";
import * as net from "node:net";
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, expect, it } from "vitest";
import { QuotaService } from "../../src/gen/tether/v1/quota_service_pb.js";
import { startApiServer, type ApiServerHarness } from "../support/api-server.js";
import { H2_PREFACE } from "../support/raw-h2.js";

const SILENT = 300;
const HALF_PREFACE = 300;
// Long enough for all of them to be open at once on a busy machine, short for a test.
const HANDSHAKE_TIMEOUT_MS = 3_000;
// The attacker comes from an address of its own, so the per-address cap (which it hits) is not
// what the other tenant, on 127.0.0.1, runs into.
const ATTACKER = "127.0.0.2";

let h: ApiServerHarness;
beforeAll(async () => {
  h = await startApiServer({
    env: {
      TETHER_API_KEYS: "key-victim=victim",
      TETHER_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_TIMEOUT_MS),
      // High enough that the timeout, not the cap, has to close the attacker's sockets.
      TETHER_MAX_CONNECTIONS_PER_ADDRESS: String(2 * (SILENT + HALF_PREFACE)),
    },
  });
});
afterAll(() => h.close());

const openFds = () => readdirSync("/proc/self/fd").length;

function attack(port: number, preface: Buffer | undefined): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress: ATTACKER }, () => {
      if (preface) socket.write(preface);
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

it("closes hundreds of silent and half-preface sockets within the timeout while another tenant is answered", async () => {
  const quotas = createClient(QuotaService, h.transport);
  const auth = { headers: { authorization: "Bearer key-victim" } };
  // The victim's connection is open before the attack.
  await quotas.getQuotaUsage({ tenant: "victim" }, auth);
  const before = openFds();

  const sockets = await Promise.all([
    ...Array.from({ length: SILENT }, () => attack(h.server.port, undefined)),
    ...Array.from({ length: HALF_PREFACE }, () =>
      attack(h.server.port, H2_PREFACE.subarray(0, 12)),
    ),
  ]);
  const closed = sockets.map((s) =>
    s.destroyed ? Promise.resolve() : new Promise((resolve) => s.once("close", resolve)),
  );
  const during = openFds();

  // The other tenant is answered while the sockets are held.
  const started = Date.now();
  const usage = await quotas.getQuotaUsage({ tenant: "victim" }, auth);
  const victimMs = Date.now() - started;
  expect(usage.tenant).toBe("victim");
  // A generous ceiling: the attack would otherwise hold these sockets forever.
  expect(victimMs).toBeLessThan(5_000);

  // Every attacking socket is closed by the server, far sooner than a minute.
  await Promise.race([
    Promise.all(closed),
    new Promise((_, reject) => setTimeout(() => reject(new Error("sockets still open")), 15_000)),
  ]);
  const after = openFds();
  console.log(
    JSON.stringify({ probe: "idle-sockets", fdsBefore: before, during, after, victimMs }),
  );
  expect(during - before).toBeGreaterThanOrEqual(SILENT + HALF_PREFACE);
  expect(after - before).toBeLessThan(20);
});
