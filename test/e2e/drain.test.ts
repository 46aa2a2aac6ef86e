// ADR 0302's drain, on the real process: SIGTERM ends idle WatchSession streams at once with
// UNAVAILABLE (clients resume on another replica), hands over a turn that waits for a client's
// tool answer, and a drain that released every lease exits 0 long before the drain timeout.
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";
import { freePort } from "../support/redis-harness.js";
import { waitFor } from "../support/wait-for.js";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";

const repo = resolve(import.meta.dirname, "../..");
/** Far above what a clean drain takes here: an exit after it means the drain waited it out. */
const DRAIN_TIMEOUT_MS = 20_000;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
});

interface Tether {
  port: number;
  output(): string;
  exited: Promise<number | null>;
  signal(name: NodeJS.Signals): void;
}

async function startTether(): Promise<Tether> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", join(repo, "src/server/main.ts")], {
    cwd: repo,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TETHER_HOST: "127.0.0.1",
      TETHER_PORT: String(port),
      TETHER_METRICS_PORT: "0",
      TETHER_PROVIDER: "scripted-tools",
      TETHER_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
      TETHER_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr.on("data", (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const health = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
  let status: Status | undefined;
  await waitFor(
    async () => {
      status = await health
        .check({ service: "" }, { timeoutMs: 1_000 })
        .then((r) => r.status)
        .catch(() => undefined);
      return status === Status.SERVING || child.exitCode !== null;
    },
    { timeoutMs: 20_000, intervalMs: 100, what: "the server to serve" },
  ).catch(() => undefined);
  expect(status, output).toBe(Status.SERVING);
  return { port, output: () => output, exited, signal: (name) => child.kill(name) };
}

/** Reads a stream to its end; resolves with the error that ended it, if any. */
async function drainStream(stream: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of stream);
    return undefined;
  } catch (error) {
    return error;
  }
}

const text = (value: string) => [{ kind: { case: "text" as const, value } }];

/** A replica's closing has one reason, whichever layer ends the call (the runtime or the server). */
const closingReasons = (error: ConnectError) =>
  error.findDetails(ErrorInfoSchema).map((detail) => detail.reason);

describe("drain on SIGTERM", () => {
  it("ends an idle WatchSession at once with UNAVAILABLE and exits 0", async () => {
    const tether = await startTether();
    const turns = createClient(
      TurnService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${tether.port}` }),
    );
    const cursors: bigint[] = [];
    for await (const r of turns.streamTurn({ sessionId: "idle", input: text("hello") })) {
      if (r.event) cursors.push(r.event.cursor);
    }
    // The watch starts one event before the end: that event arriving shows the server serves
    // the watch, which then waits idle, as nothing follows the completed turn.
    const watching = turns.watchSession({ sessionId: "idle", afterCursor: cursors.at(-2) ?? 0n });
    const iterator = watching[Symbol.asyncIterator]();
    const last = await iterator.next();
    expect(last.done === false && last.value.event?.cursor).toBe(cursors.at(-1));
    const ended = iterator.next().then(
      () => undefined,
      (error: unknown) => error,
    );

    const signalled = Date.now();
    tether.signal("SIGTERM");
    const error = await ended;
    expect(error, tether.output()).toBeInstanceOf(ConnectError);
    expect(Code[(error as ConnectError).code], `${String(error)}\n${tether.output()}`).toBe(
      Code[Code.Unavailable],
    );
    expect(closingReasons(error as ConnectError), String(error)).toEqual(["SERVER_SHUTTING_DOWN"]);
    expect(await tether.exited, tether.output()).toBe(0);
    expect(Date.now() - signalled, tether.output()).toBeLessThan(DRAIN_TIMEOUT_MS / 2);
  }, 60_000);

  it("parks a turn waiting for a client tool, ends its stream with UNAVAILABLE and exits 0", async () => {
    const tether = await startTether();
    const turns = createClient(
      TurnService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${tether.port}` }),
    );
    const stream = turns.streamTurn({
      sessionId: "waiting",
      input: text("/tool lookup {}"),
      clientTools: [{ name: "lookup", description: "", parametersJsonSchema: '{"type":"object"}' }],
    });
    const iterator = stream[Symbol.asyncIterator]();
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
      if (r.value.event?.event.case === "toolCallRequested") break;
    }
    // The turn now waits for the client's answer, which never comes.
    const signalled = Date.now();
    tether.signal("SIGTERM");
    const error = await drainStream({ [Symbol.asyncIterator]: () => iterator });
    expect(error, tether.output()).toBeInstanceOf(ConnectError);
    expect(Code[(error as ConnectError).code], `${String(error)}\n${tether.output()}`).toBe(
      Code[Code.Unavailable],
    );
    expect(closingReasons(error as ConnectError), String(error)).toEqual(["SERVER_SHUTTING_DOWN"]);
    expect(await tether.exited, tether.output()).toBe(0);
    expect(Date.now() - signalled, tether.output()).toBeLessThan(DRAIN_TIMEOUT_MS / 2);
    // Parked at once (not after TETHER_PARK_AFTER_MS): the answer can resume it on any replica.
    expect(tether.output()).toMatch(/turn parked/u);
  }, 60_000);
});
