// A loopback TCP proxy that counts client-to-server writes: with one cycle in flight at a time,
// each write the proxy sees is one round trip (ioredis sends a pipelined group in one write).
import { createConnection, createServer, type Server } from "node:net";

export interface RoundTripCounter {
  port: number;
  writes(): number;
  close(): Promise<void>;
}

export async function startRoundTripCounter(targetPort: number): Promise<RoundTripCounter> {
  let writes = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    client.on("data", () => {
      writes++;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    writes: () => writes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}
