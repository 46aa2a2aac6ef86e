// The benchmarks' OTLP/HTTP trace receiver, as its own process (started by otlp-sink.ts): it
// listens on 127.0.0.1 only, counts the spans of every export without decoding them, answers
// 200, and tells its counts and its own CPU on GET /stats. Kept out of the benchmark's process
// so the clients driving the server do not pay for the receiver on a shared machine.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { countJsonSpans, countProtobufSpans } from "./otlp-span-count.js";

let spans = 0;
let exports = 0;
let bytes = 0;
let rejected = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    if (req.method === "GET" && req.url === "/stats") {
      const cpu = process.cpuUsage();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ spans, exports, bytes, rejected, cpuMs: (cpu.user + cpu.system) / 1000 }),
      );
      return;
    }
    const body = Buffer.concat(chunks);
    const proto = (req.headers["content-type"] ?? "").startsWith("application/x-protobuf");
    try {
      spans += proto ? countProtobufSpans(body) : countJsonSpans(body.toString("utf8"));
      exports += 1;
      bytes += body.length;
      res.writeHead(200, { "content-type": proto ? "application/x-protobuf" : "application/json" });
      res.end(proto ? undefined : "{}");
    } catch {
      rejected += 1;
      res.writeHead(400);
      res.end();
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`otlp sink listening on ${port}\n`);
});
// The parent ends it with SIGTERM (or by going away: stdin closes).
process.on("SIGTERM", () => process.exit(0));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
