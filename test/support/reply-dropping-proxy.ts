// A loopback TCP proxy in front of Redis that can lose one reply: once armed, it forwards the
// next request but closes the client's connection when the answer comes back, so the command ran
// on the server and the client never learns it. That is what a crash or a network cut between a
// write and its reply looks like to a replica.
import { createServer, connect, type Server, type Socket } from "node:net";

export interface ReplyDroppingProxy {
  readonly port: number;
  /** The next reply from Redis is dropped along with the client connection. */
  dropNextReply(): void;
  /** Replies dropped so far. */
  dropped(): number;
  close(): Promise<void>;
}

export async function startReplyDroppingProxy(upstreamPort: number): Promise<ReplyDroppingProxy> {
  let armed = false;
  let dropped = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("data", (chunk: Buffer) => upstream.write(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (armed) {
        armed = false;
        dropped++;
        closeBoth();
        return;
      }
      client.write(chunk);
    });
    client.on("error", closeBoth);
    upstream.on("error", closeBoth);
    client.on("close", closeBoth);
    upstream.on("close", closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    dropNextReply: () => {
      armed = true;
    },
    dropped: () => dropped,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
