// Clients from other stacks against the real server (`node dist/server/main.js`, built here into
// .tmp/interop/dist; two replicas on the suite's Redis, port 0, the scripted-tools model): grpcurl
// through reflection, a Python grpcio client and a Go grpc-go client each running a turn with a
// client-executed tool and an approval flow that parks (answers sent to the other replica), and
// curl speaking the Connect protocol. scripts/setup-interop.sh installs the tools on first use;
// every step here has its own time bound.
import { spawn, type ChildProcess } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");
const workDir = join(repo, ".tmp/interop");
const distDir = join(workDir, "dist");

interface Ran {
  code: number | null;
  /** stdout as bytes, for binary framing. */
  raw: Buffer;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end or kills it after `timeoutMs`; never rejects on a non-zero exit. */
function runProgram(
  program: string,
  args: string[],
  options: { timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv; input?: Buffer },
): Promise<Ran> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd ?? repo,
      env: options.env ?? process.env,
      stdio: [options.input ? "pipe" : "ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (b: Buffer) => out.push(b));
    child.stderr?.on("data", (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString();
      const raw = Buffer.concat(out);
      resolveRun({
        code,
        raw,
        stdout: raw.toString(),
        stderr: signal ? `${stderr}\n[killed by ${signal} after ${options.timeoutMs} ms]` : stderr,
      });
    });
    if (options.input) child.stdin?.end(options.input);
  });
}

async function mustRun(
  program: string,
  args: string[],
  timeoutMs: number,
  env?: NodeJS.ProcessEnv,
) {
  const ran = await runProgram(program, args, { timeoutMs, ...(env ? { env } : {}) });
  if (ran.code !== 0) {
    throw new Error(
      `${program} ${args.join(" ")} exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`,
    );
  }
  return ran;
}

/** Consecutive JSON values, as grpcurl prints a stream's messages. */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

/** A client script's output: one JSON object per line. */
interface EventLine {
  kind: string;
  cursor: number;
  turn_id?: string;
  text?: string;
  call_id?: string;
  name?: string;
  arguments_json?: string;
  output?: string;
  outcome?: string;
  value?: string;
  accepted_call_ids?: string[];
  pending_call_ids?: string[];
  approval_call_ids?: string[];
  reason?: string;
  messages?: { role: string; parts: string[]; turn_id: string; revision: number }[];
}

function eventLines(stdout: string): EventLine[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as EventLine)
    .filter((l) => l.kind !== "transcript");
}

/**
 * The typed transcript the client read after its tool turn: the user's message, the call, its
 * result and the answer, all committed by that turn at revision 2 (1 is the session's creation).
 */
function expectTypedTranscript(stdout: string, turnId: string): void {
  const line = stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as EventLine)
    .find((l) => l.kind === "transcript");
  expect(line?.messages).toEqual([
    { role: "ROLE_USER", parts: ["text"], turn_id: turnId, revision: 2 },
    { role: "ROLE_ASSISTANT", parts: ["tool_call"], turn_id: turnId, revision: 2 },
    { role: "ROLE_TOOL", parts: ["tool_result"], turn_id: turnId, revision: 2 },
    { role: "ROLE_ASSISTANT", parts: ["text"], turn_id: turnId, revision: 2 },
  ]);
}

/** What every client's tool turn must show: the request, the round trip, and the echoed result. */
function expectToolTurn(events: EventLine[], args: string, answer: string): void {
  const kinds = events.map((e) => e.kind);
  expect(kinds[0]).toBe("turn_started");
  expect(kinds.at(-1)).toBe("turn_completed");
  const requested = events.find((e) => e.kind === "tool_call_requested");
  expect(requested).toMatchObject({
    name: "lookup",
    call_id: "call-1",
    arguments_json: args,
    accepted_call_ids: ["call-1"],
  });
  expect(events.find((e) => e.kind === "tool_call_finished")).toMatchObject({
    call_id: "call-1",
    output: answer,
  });
  const text = events
    .filter((e) => e.kind === "text_delta")
    .map((e) => e.text)
    .join("");
  expect(text).toBe(`lookup returned ${answer}`);
  expect(events.at(-1)).toMatchObject({ outcome: "finished", value: `lookup returned ${answer}` });
  expect(kinds.indexOf("tool_call_requested")).toBeLessThan(kinds.indexOf("tool_call_finished"));
  const cursors = events.map((e) => e.cursor);
  expect(cursors.every((c, i) => i === 0 || c > (cursors[i - 1] ?? 0))).toBe(true);
  expect(new Set(events.map((e) => e.turn_id)).size).toBe(1);
}

/**
 * An approval flow: the turn parks on the approval, the client approves through the other
 * replica, the turn resumes and parks on the tool's result, the answer goes to the other replica
 * too, and the same turn finishes with it, without a second turn_started.
 */
function expectApprovalTurn(events: EventLine[], answer: string): void {
  const kinds = events.map((e) => e.kind);
  expect(kinds.filter((k) => k === "turn_started")).toHaveLength(1);
  expect(events.find((e) => e.kind === "tool_approval_requested")).toMatchObject({
    call_id: "call-1",
    name: "lookup",
  });
  const parks = events.filter((e) => e.kind === "turn_parked");
  expect(parks).toHaveLength(2);
  expect(parks[0]).toMatchObject({ approval_call_ids: ["call-1"], accepted_call_ids: ["call-1"] });
  expect(parks[1]).toMatchObject({ pending_call_ids: ["call-1"], accepted_call_ids: ["call-1"] });
  const resumed = events.filter((e) => e.kind === "turn_resumed");
  expect(resumed.map((e) => e.reason)).toEqual([
    "RESUME_REASON_ANSWERED",
    "RESUME_REASON_ANSWERED",
  ]);
  expect(kinds.indexOf("tool_approval_requested")).toBeLessThan(
    kinds.indexOf("tool_call_requested"),
  );
  expect(events.at(-1)).toMatchObject({ outcome: "finished", value: `lookup returned ${answer}` });
  expect(new Set(events.map((e) => e.turn_id)).size).toBe(1);
}

let tools: Record<string, string> = {};
const servers: ChildProcess[] = [];
/** Two replicas of one deployment on the suite's Redis; most tests use the first. */
let address = "";
let otherAddress = "";

/** A replica on the suite's Redis; resolves with its address once it listens. */
function startServer(): Promise<string> {
  const child = spawn(process.execPath, [join(distDir, "server/main.js")], {
    cwd: repo,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      TETHER_HOST: "127.0.0.1",
      TETHER_PORT: "0",
      TETHER_METRICS_PORT: "0",
      TETHER_PROVIDER: "scripted-tools",
      TETHER_STORE: "redis",
      TETHER_REDIS_URL: inject("redisUrl"),
      TETHER_OWNER_ID: `interop-${servers.length + 1}`,
      // Turns that wait for a client park at once, so the approval flows park every time.
      TETHER_PARK_AFTER_MS: "0",
      TETHER_LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  servers.push(child);
  let output = "";
  return new Promise<string>((resolveAddress, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line:\n${output}`)), 20_000);
    const onData = (b: Buffer) => {
      output += b.toString();
      const match = /tether listening on (127\.0\.0\.1:\d+)/u.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolveAddress(match[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`server exited ${code}:\n${output}`)));
  });
}

beforeAll(async () => {
  // Installs on the first run (minutes: grpcurl and the plugins build from source); seconds after.
  const setup = await mustRun("bash", [join(repo, "scripts/setup-interop.sh")], 900_000);
  tools = Object.fromEntries(
    setup.stdout
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );

  // The production build, into a directory of its own so it races no other test over dist/.
  await rm(distDir, { recursive: true, force: true });
  await mustRun(
    join(repo, "node_modules/.bin/tsc"),
    ["-p", join(repo, "tsconfig.build.json"), "--outDir", distDir],
    180_000,
  );
  await cp(join(repo, "src/store/redis/lua"), join(distDir, "store/redis/lua"), {
    recursive: true,
  });

  [address, otherAddress] = await Promise.all([startServer(), startServer()]);
  expect(address).not.toBe("127.0.0.1:0");
}, 1_200_000);

afterAll(async () => {
  await Promise.all(
    servers.map(async (child) => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
});

describe("grpcurl, through server reflection", () => {
  const grpcurl = (...args: string[]) =>
    mustRun(tools.GRPCURL ?? "grpcurl", ["-plaintext", "-max-time", "15", ...args], 20_000);

  it("lists every Tether service with health and reflection", async () => {
    const services = (await grpcurl(address, "list")).stdout.split("\n").filter(Boolean);
    expect(services).toEqual(
      expect.arrayContaining([
        "tether.v1.TurnService",
        "tether.v1.SessionService",
        "tether.v1.AgentService",
        "tether.v1.QueueService",
        "tether.v1.LeaseService",
        "grpc.health.v1.Health",
      ]),
    );
    const turnMethods = (await grpcurl(address, "list", "tether.v1.TurnService")).stdout;
    expect(turnMethods.split("\n").filter(Boolean).sort()).toEqual([
      "tether.v1.TurnService.CancelTurn",
      "tether.v1.TurnService.DecideToolCalls",
      "tether.v1.TurnService.StreamTurn",
      "tether.v1.TurnService.SubmitToolResults",
      "tether.v1.TurnService.WatchSession",
    ]);
  });

  it("describes StreamTurnRequest field by field", async () => {
    const described = (await grpcurl(address, "describe", "tether.v1.StreamTurnRequest")).stdout;
    expect(described).toContain("tether.v1.StreamTurnRequest is a message:");
    expect(described).toMatch(/string session_id = 1;/u);
    expect(described).toMatch(/repeated \.tether\.v1\.InputPart input = 2;/u);
    expect(described).toMatch(/\.tether\.v1\.BusyStrategy busy_strategy = 4;/u);
    expect(described).toMatch(/repeated \.tether\.v1\.ToolDefinition client_tools = 5;/u);
  });

  it("decodes Tether's error details (ErrorInfo, BadRequest) from the server's descriptors", async () => {
    const refused = await runProgram(
      tools.GRPCURL ?? "grpcurl",
      [
        "-plaintext",
        "-max-time",
        "15",
        "-d",
        '{"session_id":"bad id"}',
        address,
        "tether.v1.SessionService/CreateSession",
      ],
      { timeoutMs: 20_000 },
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("Code: InvalidArgument");
    expect(refused.stderr).not.toContain("is not recognized");
    expect(refused.stderr).toContain('"reason": "INVALID_ARGUMENT"');
    expect(refused.stderr).toContain('"@type": "type.googleapis.com/google.rpc.BadRequest"');
    expect(refused.stderr).toContain('"field": "session_id"');
  });

  it("checks health as SERVING", async () => {
    const out = (await grpcurl(address, "grpc.health.v1.Health/Check")).stdout;
    expect(JSON.parse(out)).toEqual({ status: "SERVING" });
  });

  it("streams a turn from JSON input to turn_completed", async () => {
    const out = await grpcurl(
      "-d",
      '{"session_id":"grpcurl-turn","input":[{"text":"hi"}]}',
      address,
      "tether.v1.TurnService/StreamTurn",
    );
    const events = jsonValues(out.stdout).map(
      (m) => (m as { event: Record<string, unknown> }).event,
    );
    expect(Object.keys(events[0] ?? {})).toContain("turnStarted");
    const text = events.map((e) => (e.textDelta as { text?: string } | undefined)?.text ?? "");
    expect(text.join("")).toBe("hi");
    expect(events.at(-1)).toMatchObject({
      sessionId: "grpcurl-turn",
      turnCompleted: {
        outcome: { finished: { reason: "FINISH_REASON_ASSISTANT_MESSAGE", value: "hi" } },
        headRevision: "2",
      },
    });
  });
});

describe("a Python grpcio client", () => {
  it("runs a turn whose client tool it answers through SubmitToolResults", async () => {
    const stubs = await mkdtemp(join(tmpdir(), "tether-py-stubs-"));
    try {
      const ran = await mustRun(
        tools.PYTHON ?? "python3",
        [
          join(repo, "test/interop/python/client.py"),
          "--addr",
          address,
          "--proto",
          join(repo, "proto"),
          "--out",
          stubs,
          "--session",
          "python-turn",
          "--prompt",
          '/tool lookup {"key":"py"}',
          "--answer",
          "from-python",
        ],
        60_000,
      );
      expectToolTurn(eventLines(ran.stdout), '{"key":"py"}', "from-python");
      expectTypedTranscript(ran.stdout, eventLines(ran.stdout)[0]?.turn_id ?? "");
    } finally {
      await rm(stubs, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("a Python grpcio client, approving", () => {
  it("runs an approval flow that parks, answering through another replica", async () => {
    const stubs = await mkdtemp(join(tmpdir(), "tether-py-stubs-"));
    try {
      const ran = await mustRun(
        tools.PYTHON ?? "python3",
        [
          join(repo, "test/interop/python/client.py"),
          "--addr",
          address,
          "--answer-addr",
          otherAddress,
          "--proto",
          join(repo, "proto"),
          "--out",
          stubs,
          "--session",
          `python-approval-${Date.now()}`,
          "--approval",
          "--answer",
          "approved-python",
        ],
        60_000,
      );
      expectApprovalTurn(eventLines(ran.stdout), "approved-python");
    } finally {
      await rm(stubs, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("a Go grpc-go client", () => {
  it("runs a turn whose client tool it answers through SubmitToolResults", async () => {
    const goDir = join(repo, "test/interop/go");
    const env = {
      ...process.env,
      PATH: `${tools.GOBIN_DIR ?? ""}:${process.env.PATH ?? ""}`,
      GOTOOLCHAIN: "local",
      GOFLAGS: "-mod=readonly",
    };
    // Stubs from proto/ by buf with the Go plugins, into the module's gitignored gen/.
    await rm(join(goDir, "gen"), { recursive: true, force: true });
    await mustRun(
      join(repo, "node_modules/.bin/buf"),
      [
        "generate",
        join(repo, "proto"),
        "--template",
        join(goDir, "buf.gen.yaml"),
        "--path",
        join(repo, "proto/tether/v1"),
        "-o",
        goDir,
      ],
      60_000,
      env,
    );
    const binDir = await mkdtemp(join(tmpdir(), "tether-go-client-"));
    try {
      const binary = join(binDir, "client");
      const built = await runProgram(tools.GO ?? "go", ["build", "-o", binary, "."], {
        cwd: goDir,
        env,
        timeoutMs: 240_000,
      });
      expect(built.code, built.stderr).toBe(0);
      const ran = await mustRun(
        binary,
        [
          "-addr",
          address,
          "-session",
          "go-turn",
          "-prompt",
          '/tool lookup {"key":"go"}',
          "-answer",
          "from-go",
        ],
        30_000,
      );
      expectToolTurn(eventLines(ran.stdout), '{"key":"go"}', "from-go");
      expectTypedTranscript(ran.stdout, eventLines(ran.stdout)[0]?.turn_id ?? "");
      const approving = await mustRun(
        binary,
        [
          "-addr",
          address,
          "-answer-addr",
          otherAddress,
          "-session",
          `go-approval-${Date.now()}`,
          "-approval",
          "-answer",
          "approved-go",
        ],
        30_000,
      );
      expectApprovalTurn(eventLines(approving.stdout), "approved-go");
    } finally {
      await rm(binDir, { recursive: true, force: true });
    }
  }, 360_000);
});

describe("curl, speaking Connect", () => {
  const base = () => `http://${address}`;
  const post = (path: string, body: string) =>
    runProgram(
      "curl",
      [
        "-sS",
        "--max-time",
        "15",
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-w",
        "\n%{http_code}",
        "--data",
        body,
        `${base()}${path}`,
      ],
      { timeoutMs: 20_000 },
    );
  const split = (ran: Ran) => {
    const cut = ran.stdout.lastIndexOf("\n");
    return { status: Number(ran.stdout.slice(cut + 1)), body: ran.stdout.slice(0, cut) };
  };

  it("creates and reads a session with unary JSON calls; an unknown one is not_found", async () => {
    const created = split(
      await post("/tether.v1.SessionService/CreateSession", '{"sessionId":"curl-session"}'),
    );
    expect(created.status).toBe(200);
    expect(JSON.parse(created.body)).toMatchObject({ session: { sessionId: "curl-session" } });
    const read = split(
      await post("/tether.v1.SessionService/GetSession", '{"sessionId":"curl-session"}'),
    );
    expect(read.status).toBe(200);
    expect(JSON.parse(read.body)).toMatchObject({ session: { sessionId: "curl-session" } });
    const missing = split(
      await post("/tether.v1.SessionService/GetSession", '{"sessionId":"curl-nobody"}'),
    );
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ code: "not_found" });
  });

  it("streams a turn as Connect envelopes, ending with an end-of-stream envelope", async () => {
    const request = Buffer.from(
      JSON.stringify({ sessionId: "curl-stream", input: [{ text: "over connect" }] }),
    );
    const envelope = Buffer.alloc(5 + request.length);
    envelope.writeUInt32BE(request.length, 1);
    request.copy(envelope, 5);
    const ran = await runProgram(
      "curl",
      [
        "-sS",
        "--max-time",
        "15",
        "-X",
        "POST",
        "-H",
        "Content-Type: application/connect+json",
        "--data-binary",
        "@-",
        "-o",
        "-",
        `${base()}/tether.v1.TurnService/StreamTurn`,
      ],
      { timeoutMs: 20_000, input: envelope },
    );
    expect(ran.code, ran.stderr).toBe(0);
    const raw = ran.raw;
    const frames: { flags: number; body: unknown }[] = [];
    for (let at = 0; at + 5 <= raw.length;) {
      const length = raw.readUInt32BE(at + 1);
      const body = raw.subarray(at + 5, at + 5 + length).toString("utf8");
      frames.push({ flags: raw[at] ?? 0, body: JSON.parse(body) });
      at += 5 + length;
    }
    const last = frames.at(-1);
    expect(last?.flags).toBe(2);
    expect(last?.body).toEqual({});
    const events = frames
      .slice(0, -1)
      .map((f) => (f.body as { event: Record<string, unknown> }).event);
    expect(Object.keys(events[0] ?? {})).toContain("turnStarted");
    const text = events.map((e) => (e.textDelta as { text?: string } | undefined)?.text ?? "");
    expect(text.join("")).toBe("over connect");
    expect(events.at(-1)).toMatchObject({
      turnCompleted: { outcome: { finished: { value: "over connect" } }, headRevision: "2" },
    });
    const read = split(
      await post("/tether.v1.SessionService/GetSession", '{"sessionId":"curl-stream"}'),
    );
    expect(JSON.parse(read.body)).toMatchObject({
      session: { sessionId: "curl-stream", headRevision: "2" },
    });
  });
});
