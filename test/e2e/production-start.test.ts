// The container's start path, without a container engine: the Dockerfile's build stage output,
// production dependencies only, started with the image's ENTRYPOINT + CMD and ENV as a non-root
// user in a directory it cannot write (as under a read-only root), then grpc.health.v1 Check and a
// clean exit on SIGTERM. Every command and variable is read from the Dockerfile, so the two
// cannot drift apart.
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  argsOf,
  envOf,
  execForm,
  exposedPorts,
  parseDockerfile,
  stage,
  type Stage,
} from "../support/dockerfile.js";
import { freePort } from "../support/redis-harness.js";
import { waitFor } from "../support/wait-for.js";

const execFileAsync = promisify(execFile);

/** execFile that puts the command's own output into the error, so a failed build explains itself. */
async function run(file: string, args: string[], options: { cwd: string; timeout: number }) {
  try {
    return await execFileAsync(file, args, { ...options, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(" ")} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}
const repo = resolve(import.meta.dirname, "../..");
const stages = parseDockerfile(join(repo, "Dockerfile"));
const build = stage(stages, "build");
const prodDeps = stage(stages, "prod-deps");
const runtime = stage(stages, "runtime");
const NOBODY = 65534;

describe("the Dockerfile's runtime contract", () => {
  it("runs node on the built entry point under tini, never through npm", () => {
    expect(execForm(runtime, "ENTRYPOINT")).toEqual(["/usr/bin/tini", "--"]);
    const cmd = execForm(runtime, "CMD") ?? [];
    expect(cmd[0]).toBe("node");
    expect(cmd.at(-1)).toBe("dist/server/main.js");
    expect(cmd).not.toContain("npm");
  });

  it("listens on all interfaces and exposes the server's default gRPC and metrics ports", () => {
    const env = envOf(runtime);
    expect(env.TETHER_HOST).toBe("0.0.0.0");
    expect(env.TETHER_PORT).toBe("50051");
    expect(env.TETHER_METRICS_PORT).toBe("9464");
    expect(exposedPorts(runtime).sort()).toEqual([50051, 9464].sort());
  });

  it("writes only under /tmp and runs as a numeric non-root user the chart also uses", () => {
    const env = envOf(runtime);
    expect(env.HOME).toBe("/tmp");
    expect(env.NPM_CONFIG_CACHE?.startsWith("/tmp/")).toBe(true);
    const user = argsOf(runtime, "USER").at(-1) ?? "";
    expect(user).toMatch(/^\d+:\d+$/u);
    const [uid, gid] = user.split(":").map(Number);
    expect(uid).toBeGreaterThan(0);
    const values = readFileSync(join(repo, "helm/tether/values.yaml"), "utf8");
    expect(values).toMatch(new RegExp(`^  runAsUser: ${uid}$`, "mu"));
    expect(values).toMatch(new RegExp(`^  runAsGroup: ${gid}$`, "mu"));
  });

  it("lets every COPY source through .dockerignore, and nothing else", () => {
    const allowed = readFileSync(join(repo, ".dockerignore"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("!"))
      .map((line) => line.slice(1));
    const sources = stages
      .flatMap((s) => argsOf(s, "COPY"))
      .filter((args) => !args.startsWith("--from="))
      .flatMap((args) => args.split(/\s+/u).slice(0, -1));
    expect([...new Set(sources)].sort()).toEqual([...allowed].sort());
  });

  it("pins a Node 20 slim base by exact version and installs production dependencies only", () => {
    const arg = readFileSync(join(repo, "Dockerfile"), "utf8").match(/^ARG NODE_IMAGE=(\S+)$/mu);
    expect(arg?.[1]).toMatch(/^node:20\.\d+\.\d+-bookworm-slim$/u);
    for (const s of stages) expect(s.from).toBe("${NODE_IMAGE}");
    expect(argsOf(build, "RUN")).toContain("npm run build");
    expect(argsOf(prodDeps, "RUN")[0]).toMatch(/^npm ci --omit=dev /u);
  });
});

/** Copies what one COPY instruction names; `--from=` sources come from the stages built here. */
async function applyCopy(
  args: string,
  dest: string,
  stageDirs: Map<string, string>,
): Promise<void> {
  const words = args.split(/\s+/u);
  const from = words[0]?.startsWith("--from=") ? words.shift()?.slice("--from=".length) : undefined;
  const target = words.pop() ?? "";
  for (const source of words) {
    let path: string;
    if (from === undefined) {
      path = join(repo, source);
    } else {
      const dir = stageDirs.get(from);
      if (!dir) throw new Error(`COPY --from=${from}: stage not reproduced here`);
      // Every stage works in /src (checked below), so /src/x is <stage dir>/x.
      path = join(dir, source.replace(/^\/src\/?/u, ""));
    }
    const into = target.endsWith("/")
      ? join(dest, target, source.split("/").at(-1) ?? "")
      : join(dest, target);
    await cp(path, into, { recursive: true });
  }
}

async function copyAll(s: Stage, dest: string, stageDirs: Map<string, string>): Promise<void> {
  await mkdir(dest, { recursive: true });
  for (const args of argsOf(s, "COPY")) await applyCopy(args, dest, stageDirs);
}

interface Callback<T> {
  (err: grpc.ServiceError | null, res?: T): void;
}

interface HealthClient extends grpc.Client {
  Check(
    req: { service: string },
    options: grpc.CallOptions,
    cb: Callback<{ status: string }>,
  ): void;
}

interface SessionClient extends grpc.Client {
  CreateSession(
    req: { session_id: string },
    options: grpc.CallOptions,
    cb: Callback<{ session?: { session_id: string; head_revision: string } }>,
  ): void;
  GetSession(
    req: { session_id: string },
    options: grpc.CallOptions,
    cb: Callback<{ session?: { session_id: string; head_revision: string } }>,
  ): void;
}

type Constructor<T> = new (address: string, credentials: grpc.ChannelCredentials) => T;

function loadProto(file: string): grpc.GrpcObject {
  const definition = protoLoader.loadSync(file, {
    includeDirs: [join(repo, "proto")],
    keepCase: true,
    enums: String,
    longs: String,
  });
  return grpc.loadPackageDefinition(definition);
}

function connect<T>(file: string, service: string, port: number): T {
  let node: unknown = loadProto(file);
  for (const part of service.split(".")) node = (node as Record<string, unknown>)[part];
  const Client = node as Constructor<T>;
  return new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

function unary<Req, Res>(
  call: (req: Req, options: grpc.CallOptions, cb: Callback<Res>) => void,
  req: Req,
): Promise<Res> {
  return new Promise((resolveCall, reject) => {
    call(req, { deadline: Date.now() + 2_000 }, (err, res) =>
      err || !res ? reject(err ?? new Error("no response")) : resolveCall(res),
    );
  });
}

/** One start of the image's command; `stop()` sends SIGTERM and reports how it ended. */
interface Started {
  grpcPort: number;
  metricsPort: number;
  pid: number | undefined;
  output(): string;
  running(): boolean;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null } | "timeout">;
  kill(): void;
}

const NON_ROOT = process.getuid?.() === 0 && existsSync("/usr/bin/setpriv");

async function startImage(appDir: string, extraEnv: Record<string, string>): Promise<Started> {
  let command = [...(execForm(runtime, "ENTRYPOINT") ?? []), ...(execForm(runtime, "CMD") ?? [])];
  if (!existsSync(command[0] ?? "")) {
    console.warn(`production start test: ${command[0]} is missing, starting CMD without it`);
    command = execForm(runtime, "CMD") ?? [];
  }
  if (NON_ROOT) {
    // The app directory stays root-owned: the server must start without writing to it.
    command = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...command];
  } else if (process.getuid?.() === 0) {
    console.warn("production start test: setpriv is missing, running as root");
  }
  const grpcPort = await freePort();
  const metricsPort = await freePort();
  const env = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    ...envOf(runtime),
    // The only departures from the image: loopback and free ports, for a test on a shared host.
    TETHER_HOST: "127.0.0.1",
    TETHER_PORT: String(grpcPort),
    TETHER_METRICS_PORT: String(metricsPort),
    ...extraEnv,
  };
  const [program, ...args] = command;
  const child = spawn(program ?? "node", args, {
    cwd: appDir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on("exit", (code, signal) => r({ code, signal })),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    grpcPort,
    metricsPort,
    pid: child.pid,
    output: () => output,
    running,
    async stop() {
      child.kill("SIGTERM");
      const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 15_000).unref());
      return Promise.race([exited, timeout]);
    },
    kill() {
      if (running()) child.kill("SIGKILL");
    },
  };
}

/**
 * Starts the image's command and waits until it serves. A free port can be taken by another
 * process on the shared host between freePort() and the server's listen: that start (and only
 * that) is tried again on new ports, at most three times.
 */
async function startServing(appDir: string, extraEnv: Record<string, string>): Promise<Started> {
  for (let attempt = 1; ; attempt++) {
    const started = await startImage(appDir, extraEnv);
    try {
      await waitServing(started);
      return started;
    } catch (error) {
      started.kill();
      if (attempt >= 3 || !started.output().includes("EADDRINUSE")) throw error;
    }
  }
}

/** Polls grpc.health.v1 Check("") until SERVING; fails if the process exits, or after 20 s. */
async function waitServing(started: Started): Promise<void> {
  const health = connect<HealthClient>(
    join(repo, "proto/grpc/health/v1/health.proto"),
    "grpc.health.v1.Health",
    started.grpcPort,
  );
  let lastError: unknown;
  try {
    await waitFor(
      async () => {
        if (!started.running()) throw new Error(`the server exited:\n${started.output()}`);
        try {
          return (await unary(health.Check.bind(health), { service: "" })).status === "SERVING";
        } catch (error) {
          lastError = error;
          return false;
        }
      },
      {
        what: 'Check("") to answer SERVING',
        timeoutMs: 20_000,
        intervalMs: 200,
        detail: () => `${String(lastError)}\n${started.output()}`,
      },
    );
  } finally {
    health.close();
  }
}

let root = "";
let appDir = "";

beforeAll(async () => {
  for (const s of [build, prodDeps, runtime]) {
    expect(argsOf(s, "WORKDIR").at(-1), `${s.name} WORKDIR`).toBe(s === runtime ? "/app" : "/src");
  }
  root = await mkdtemp(join(tmpdir(), "tether-production-"));
  await chmod(root, 0o755);
  const buildDir = join(root, "build");
  const prodDir = join(root, "prod-deps");
  appDir = join(root, "app");

  // build: the stage's COPY lines, the repository's installed dev dependencies in place of its
  // `npm ci`, then its `npm run build`.
  await copyAll(build, buildDir, new Map());
  await symlink(join(repo, "node_modules"), join(buildDir, "node_modules"), "dir");
  await run("npm", ["run", "build"], { cwd: buildDir, timeout: 180_000 });
  await rm(join(buildDir, "node_modules"));

  // prod-deps: its first RUN segment, `npm ci --omit=dev …` (not the cache clean after it,
  // which would empty this machine's npm cache).
  await copyAll(prodDeps, prodDir, new Map());
  const install = (argsOf(prodDeps, "RUN")[0] ?? "").split("&&")[0]?.trim().split(/\s+/u) ?? [];
  await run(install[0] ?? "npm", [...install.slice(1), "--prefer-offline"], {
    cwd: prodDir,
    timeout: 180_000,
  });

  // runtime: its COPY lines, from the two stages above.
  await copyAll(
    runtime,
    appDir,
    new Map([
      ["build", buildDir],
      ["prod-deps", prodDir],
    ]),
  );
}, 300_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

describe("the image's file tree", () => {
  it("ships production dependencies only, the compiled server and its Lua scripts", () => {
    expect(existsSync(join(appDir, "node_modules/typescript")), "dev dependency shipped").toBe(
      false,
    );
    expect(existsSync(join(appDir, "node_modules/vitest")), "dev dependency shipped").toBe(false);
    expect(existsSync(join(appDir, "node_modules/@connectrpc/connect-node"))).toBe(true);
    expect(existsSync(join(appDir, "node_modules/ioredis"))).toBe(true);
    expect(existsSync(join(appDir, "dist/server/main.js"))).toBe(true);
    expect(existsSync(join(appDir, "src")), "TypeScript sources shipped").toBe(false);
    const lua = join(appDir, "dist/store/redis/lua");
    expect(existsSync(lua) && readdirSync(lua).some((f) => f.endsWith(".lua"))).toBe(true);
  });
});

describe("the production start command, embedded store", () => {
  let started: Started | undefined;
  afterAll(() => started?.kill());

  it("answers grpc.health.v1 Check with SERVING, as a non-root user", async () => {
    started = await startServing(appDir, {});

    const uid = /^Uid:\s+(\d+)/mu.exec(readFileSync(`/proc/${started.pid}/status`, "utf8"))?.[1];
    expect(uid).toBe(String(NON_ROOT ? NOBODY : process.getuid?.()));

    const metrics = await fetch(`http://127.0.0.1:${started.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    await metrics.text();
  }, 30_000);

  it("exits 0 on SIGTERM", async () => {
    expect(started?.running(), started?.output()).toBe(true);
    const result = await started?.stop();
    expect(result, started?.output()).toEqual({ code: 0, signal: null });
    expect(started?.output()).toMatch(/shutting down/u);
  }, 20_000);
});

const redisBackends: [string, () => Record<string, string>][] = [
  ["Redis", () => ({ TETHER_STORE: "redis", TETHER_REDIS_URL: inject("redisUrl") })],
  [
    "Redis Cluster",
    () => ({
      TETHER_STORE: "redis",
      TETHER_REDIS_CLUSTER_NODES: inject("clusterPorts")
        .map((port) => `127.0.0.1:${port}`)
        .join(","),
    }),
  ],
];

describe.each(redisBackends)("the production start command, %s store", (_name, storeEnv) => {
  let started: Started | undefined;
  afterAll(() => started?.kill());

  it("serves session calls (the shipped Lua scripts load)", async () => {
    started = await startServing(appDir, storeEnv());
    const sessions = connect<SessionClient>(
      join(repo, "proto/tether/v1/session_service.proto"),
      "tether.v1.SessionService",
      started.grpcPort,
    );
    try {
      const id = `production-start-${process.pid}-${Date.now()}`;
      const created = await unary(sessions.CreateSession.bind(sessions), { session_id: id });
      expect(created.session?.session_id).toBe(id);
      const read = await unary(sessions.GetSession.bind(sessions), { session_id: id });
      expect(read.session?.session_id).toBe(id);
    } finally {
      sessions.close();
    }
  }, 30_000);

  it("exits 0 on SIGTERM, closing its Redis connections", async () => {
    expect(started?.running(), started?.output()).toBe(true);
    const result = await started?.stop();
    expect(result, started?.output()).toEqual({ code: 0, signal: null });
  }, 20_000);
});
