// Loaded into a Tether replica of the fault suite with `node --import` (NODE_OPTIONS): every TCP
// connection the replica opens to a Redis port named in FAULTS_REDIS_ROUTES
// ("redisPort:proxyPort,...") goes to that replica's own partition proxy instead
// (test/faults/partition-proxy.ts). Sentinel and Cluster clients learn node addresses from Redis
// itself (SENTINEL get-master-addr-by-name, CLUSTER SLOTS), so no address the replica is
// configured with could put a proxy in front of the nodes it discovers; rewriting the port where
// the socket is opened does, for every node and every Sentinel, while Redis, Sentinel and the
// replication links keep their real addresses. The production build itself is not changed.
/* global process */
// The default export of a built-in is the very object `require("node:net")` returns, which
// ioredis reads `createConnection` from at each connect: replacing it here reaches ioredis.
import net from "node:net";

const routes = new Map(
  (process.env.FAULTS_REDIS_ROUTES ?? "")
    .split(",")
    .filter((pair) => pair.includes(":"))
    .map((pair) => pair.split(":").map(Number)),
);

function reroute(args) {
  const [first] = args;
  if (first === null || typeof first !== "object" || Array.isArray(first)) return args;
  const via = routes.get(Number(first.port));
  const loopback =
    first.host === undefined || first.host === "127.0.0.1" || first.host === "localhost";
  if (via === undefined || !loopback) return args;
  return [{ ...first, host: "127.0.0.1", port: via }, ...args.slice(1)];
}

if (routes.size > 0) {
  const createConnection = net.createConnection;
  net.createConnection = function routedCreateConnection(...args) {
    return createConnection.apply(this, reroute(args));
  };
  net.connect = net.createConnection;
}
