// The container's start path, without a container engine: the Dockerfile's build stage output,
// production dependencies only, started with the image's ENTRYPOINT + CMD and ENV as a non-root
// user in a directory it cannot write (as under a read-only root), then grpc.health.v1 Check and a
// clean exit on SIGTERM. Every command and variable is read from the Dockerfile, so the two
// cannot drift apart.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chmod, cp, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const run = promisify(execFile);
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

interface HealthClient extends grpc.Client {
  Check(
    req: { service: string },
    options: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
  ): void;
}

function healthClient(port: number): HealthClient {
  const definition = protoLoader.loadSync(join(repo, "proto/grpc/health/v1/health.proto"), {
    enums: String,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    grpc: {
      health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } };
    };
  };
  return new loaded.grpc.health.v1.Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

function check(client: HealthClient): Promise<string> {
  return new Promise((resolveCheck, reject) => {
    client.Check({ service: "" }, { deadline: Date.now() + 1_000 }, (err, res) =>
      err ? reject(err) : resolveCheck(res?.status ?? "UNKNOWN"),
    );
  });
}

describe("the production start command", () => {
  let root = "";
  let child: ChildProcess | undefined;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let output = "";
  let grpcPort = 0;
  let metricsPort = 0;
  let client: HealthClient | undefined;
  const notes: string[] = [];

  beforeAll(async () => {
    for (const s of [build, prodDeps, runtime]) {
      expect(argsOf(s, "WORKDIR").at(-1), `${s.name} WORKDIR`).toBe(
        s === runtime ? "/app" : "/src",
      );
    }
    root = await mkdtemp(join(tmpdir(), "tether-production-"));
    await chmod(root, 0o755);
    const buildDir = join(root, "build");
    const prodDir = join(root, "prod-deps");
    const appDir = join(root, "app");

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
    expect(existsSync(join(appDir, "node_modules/typescript")), "dev dependency shipped").toBe(
      false,
    );
    expect(existsSync(join(appDir, "node_modules/@connectrpc/connect-node"))).toBe(true);

    let command = [...(execForm(runtime, "ENTRYPOINT") ?? []), ...(execForm(runtime, "CMD") ?? [])];
    if (!existsSync(command[0] ?? "")) {
      notes.push(`${command[0]} is not installed here: starting CMD without it`);
      command = execForm(runtime, "CMD") ?? [];
    }
    if (process.getuid?.() === 0 && existsSync("/usr/bin/setpriv")) {
      // The app directory stays root-owned: the server must start without writing to it.
      command = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...command];
    } else if (process.getuid?.() === 0) {
      notes.push("setpriv is missing: running as root");
    }

    grpcPort = await freePort();
    metricsPort = await freePort();
    const env = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      ...envOf(runtime),
      // The only departures from the image: loopback and free ports, for a test on a shared host.
      TETHER_HOST: "127.0.0.1",
      TETHER_PORT: String(grpcPort),
      TETHER_METRICS_PORT: String(metricsPort),
    };
    const [program, ...args] = command;
    child = spawn(program ?? "node", args, { cwd: appDir, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const started = child;
    exited = new Promise((resolveExit) =>
      started.on("exit", (code, signal) => resolveExit({ code, signal })),
    );
    if (notes.length > 0) console.warn(`production start test: ${notes.join("; ")}`);
  }, 300_000);

  afterAll(async () => {
    client?.close();
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("answers grpc.health.v1 Check with SERVING, as a non-root user", async () => {
    client = healthClient(grpcPort);
    const deadline = Date.now() + 20_000;
    let status = "";
    let lastError: unknown;
    while (Date.now() < deadline && child?.exitCode === null) {
      try {
        status = await check(client);
        if (status === "SERVING") break;
      } catch (error) {
        lastError = error;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status, `${String(lastError)}\n${output}`).toBe("SERVING");

    const uid = /^Uid:\s+(\d+)/mu.exec(readFileSync(`/proc/${child?.pid}/status`, "utf8"))?.[1];
    if (process.getuid?.() === 0 && existsSync("/usr/bin/setpriv"))
      expect(uid).toBe(String(NOBODY));
    else expect(uid).toBe(String(process.getuid?.()));

    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    await metrics.text();
  });

  it("exits 0 on SIGTERM", async () => {
    expect(child?.exitCode, output).toBeNull();
    child?.kill("SIGTERM");
    const timeout = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 15_000).unref());
    const result = await Promise.race([exited, timeout]);
    expect(result, output).toEqual({ code: 0, signal: null });
    expect(output).toMatch(/shutting down/u);
  }, 20_000);
});
