// The partition proxies of the fault suite, in a process of their own (forked by
// partition-proxy.ts) so that the runner's own work — clients, checks — never stalls Redis
// traffic. Per Tether replica ("owner") and per Redis port it routes, one loopback listener
// forwards each connection to the real port. A partition freezes every connection of one owner:
// the proxy stops reading both sides and forwarding, and closes nothing, so the replica's sockets
// stay open and silent, as under a network partition; connections the owner opens meanwhile are
// accepted and left silent too. Healing resumes forwarding what both sides had sent, as TCP does
// when a partition shorter than its retransmission limit ends — so writes a stalled holder queued
// reach Redis late, which is what the fencing tokens must stop.
import { connect, createServer, type Server, type Socket } from "node:net";

export type ProxyRequest =
  | { id: number; op: "route"; owner: string; ports: number[] }
  | { id: number; op: "partition" | "heal"; owner: string }
  | { id: number; op: "close" };

export interface ProxyReply {
  id: number;
  /** route: [redis port, proxy port] pairs. */
  routes?: [number, number][];
  /** partition: the open connections frozen. */
  frozen?: number;
  error?: string;
}

interface Pair {
  client: Socket;
  upstream: Socket;
}

interface Owner {
  frozen: boolean;
  servers: Server[];
  pairs: Set<Pair>;
  /** Connections accepted while frozen, linked to Redis at the heal. */
  waiting: (() => void)[];
}

const owners = new Map<string, Owner>();

function flow(pair: Pair): void {
  pair.client.pipe(pair.upstream);
  pair.upstream.pipe(pair.client);
}

function freeze(pair: Pair): void {
  pair.client.unpipe(pair.upstream);
  pair.upstream.unpipe(pair.client);
  pair.client.pause();
  pair.upstream.pause();
}

function link(owner: Owner, client: Socket, port: number): void {
  const upstream = connect({ host: "127.0.0.1", port });
  upstream.setNoDelay(true);
  const pair = { client, upstream };
  owner.pairs.add(pair);
  const drop = () => {
    owner.pairs.delete(pair);
    client.destroy();
    upstream.destroy();
  };
  for (const socket of [client, upstream]) {
    socket.on("error", drop);
    socket.on("close", drop);
  }
  if (owner.frozen) freeze(pair);
  else flow(pair);
}

async function route(name: string, ports: number[]): Promise<[number, number][]> {
  const owner: Owner = owners.get(name) ?? {
    frozen: false,
    servers: [],
    pairs: new Set(),
    waiting: [],
  };
  owners.set(name, owner);
  const routes: [number, number][] = [];
  for (const port of ports) {
    const server = createServer((client) => {
      client.setNoDelay(true);
      client.pause();
      if (owner.frozen) {
        client.on("error", () => client.destroy());
        owner.waiting.push(() => link(owner, client, port));
      } else link(owner, client, port);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    routes.push([port, typeof address === "object" && address ? address.port : 0]);
    owner.servers.push(server);
  }
  return routes;
}

function handle(request: ProxyRequest): Promise<ProxyReply> | ProxyReply {
  if (request.op === "route") {
    return route(request.owner, request.ports).then((routes) => ({ id: request.id, routes }));
  }
  if (request.op === "close") {
    for (const owner of owners.values()) {
      for (const server of owner.servers) server.close();
      for (const pair of owner.pairs) pair.client.destroy();
    }
    return { id: request.id };
  }
  const owner = owners.get(request.owner);
  if (!owner) return { id: request.id, error: `no routes for ${request.owner}` };
  if (request.op === "partition") {
    owner.frozen = true;
    for (const pair of owner.pairs) freeze(pair);
    return { id: request.id, frozen: owner.pairs.size };
  }
  owner.frozen = false;
  for (const pair of owner.pairs) flow(pair);
  for (const waiting of owner.waiting.splice(0)) waiting();
  return { id: request.id };
}

process.on("message", (request: ProxyRequest) => {
  void Promise.resolve(handle(request)).then(
    (reply) => process.send?.(reply),
    (error: unknown) => process.send?.({ id: request.id, error: String(error) }),
  );
});
// The runner gone (even killed), the proxies go too.
process.on("disconnect", () => process.exit(0));
