// A loopback TCP proxy in front of one redis-server that counts what its clients send: TCP
// writes, request bursts (round trips), connections, and commands by name (see resp.ts for how
// commands are counted). Used by the store and turn benchmarks.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import {
  createConnectionCounter,
  emptyTally,
  type CommandTally,
  type ScriptNamer,
} from "./resp.js";

/** Counts since the proxy started; subtract two snapshots to count what happened in between. */
export interface ProxyCounts {
  /** Client-to-server data events (one per TCP read on the proxy's side). */
  writes: number;
  /**
   * Request bursts: on each connection, client-to-server data with no server-to-client data in
   * between counts once. Summed over connections, so requests that wait on each other and
   * requests in flight together on two connections both count once per connection.
   */
  roundTrips: number;
  connections: number;
  commands: number;
  multiBlocks: number;
  byName: Map<string, number>;
}

export interface RedisProxy {
  port: number;
  /** Client-to-server data events so far (the store bench's round trips, one cycle in flight). */
  writes(): number;
  snapshot(): ProxyCounts;
  close(): Promise<void>;
}

export interface RedisProxyOptions {
  /** Names EVALSHA calls by script; without it commands are not parsed at all. */
  nameScript?: ScriptNamer;
}

export async function startRedisProxy(
  targetPort: number,
  options: RedisProxyOptions = {},
): Promise<RedisProxy> {
  let writes = 0;
  let roundTrips = 0;
  let connections = 0;
  const tally: CommandTally = emptyTally();
  const scripts = new Map<string, string>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    connections++;
    sockets.add(client);
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    const count = options.nameScript
      ? createConnectionCounter(tally, scripts, options.nameScript)
      : undefined;
    let inBurst = false;
    client.on("data", (chunk: Buffer) => {
      writes++;
      if (!inBurst) roundTrips++;
      inBurst = true;
      count?.(chunk);
    });
    upstream.on("data", () => {
      inBurst = false;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => {
      sockets.delete(client);
      upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    writes: () => writes,
    snapshot: () => ({
      writes,
      roundTrips,
      connections,
      commands: tally.commands,
      multiBlocks: tally.multiBlocks,
      byName: new Map(tally.byName),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What happened between two snapshots. */
export function countsBetween(before: ProxyCounts, after: ProxyCounts): ProxyCounts {
  const byName = new Map<string, number>();
  for (const [name, n] of after.byName) {
    const delta = n - (before.byName.get(name) ?? 0);
    if (delta !== 0) byName.set(name, delta);
  }
  return {
    writes: after.writes - before.writes,
    roundTrips: after.roundTrips - before.roundTrips,
    connections: after.connections - before.connections,
    commands: after.commands - before.commands,
    multiBlocks: after.multiBlocks - before.multiBlocks,
    byName,
  };
}
