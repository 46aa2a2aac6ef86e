// The README's examples run as written, in order: every `sh` block that calls the API (grpcurl or
// curl) is split into its commands and run against the production build (`node dist/server/main.js`,
// built here into .tmp/readme/dist) on the embedded default (memory store, echo model). A block's
// `… npm start` line restarts the server with the variables it sets, as a reader following along
// would; the README's address is swapped for the server's free port; a `<turnId …>` placeholder
// is filled from the stream the command before it opened. Each command must succeed, and where
// the README shows output, its key fields must be there. grpcurl is installed the way the interop
// test installs it (scripts/setup-interop.sh, from the Go module proxy); never skipped.
import { spawn, type ChildProcess } from "node:child_process";
import { cp, readFile, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.js";

const repo = resolve(import.meta.dirname, "../..");
const distDir = join(repo, ".tmp/readme/dist");
const PLACEHOLDER = /<turn_?[iI]d[^>]*>/u;
/**
 * The front door's examples name an object an earlier answer made: the session
 * (`"id":"sess_…"`), the automation (`"id":"auto_…"`).
 */
const MADE_OBJECTS = [
  { placeholder: "<session id>", made: /"id":"(sess_[^"]+)"/u },
  { placeholder: "<automation id>", made: /"id":"(auto_[^"]+)"/u },
];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A program run to its end (killed after `timeoutMs`); never rejects on a non-zero exit. */
function run(program: string, args: string[], timeoutMs: number, env = process.env): Promise<Ran> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(program, args, { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

async function mustRun(program: string, args: string[], timeoutMs: number): Promise<Ran> {
  const ran = await run(program, args, timeoutMs);
  if (ran.code !== 0) {
    throw new Error(`${program} ${args.join(" ")} exited ${ran.code}:\n${ran.stderr}`);
  }
  return ran;
}

/** The README's `sh` blocks that call the API, in order. */
function apiBlocks(readme: string): string[] {
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gmu)].map((m) => m[1] ?? "");
  return blocks.filter((b) => /(^|\s)(grpcurl|curl) /mu.test(b) && /:50051/u.test(b));
}

/** A block's commands as a shell reads them: quotes span lines, `\` continues, `#` comments. */
function commandsOf(block: string): string[] {
  const out: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (let i = 0; i < block.length; i++) {
    const c = block.charAt(i);
    if (quote !== undefined) {
      current += c;
      if (c === quote) quote = undefined;
      else if (quote === '"' && c === "\\") current += block.charAt(++i);
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
    } else if (c === "\\" && block.charAt(i + 1) === "\n") {
      current += " ";
      i++;
    } else if (c === "#" && (current === "" || /\s$/u.test(current))) {
      while (i + 1 < block.length && block.charAt(i + 1) !== "\n") i++;
    } else if (c === "\n") {
      if (current.trim() !== "") out.push(current.trim());
      current = "";
    } else {
      current += c;
    }
  }
  if (current.trim() !== "") out.push(current.trim());
  return out;
}

/** What the README shows of a command's answer: key fields that must be in the output. */
const SHOWN: { command: RegExp; output: string[] }[] = [
  { command: / list$/u, output: ["tether.v1.TurnService", "tether.v1.ScheduleService"] },
  { command: /TurnService\/StreamTurn$/u, output: ['"turnCompleted"'] },
  { command: /"server_tools":\["everything"\]/u, output: ["everything__echo returned Echo: hi"] },
  {
    command: /"session_id":"capped"\}' \S+ tether\.v1\.SessionService\/GetSession$/u,
    output: ['"costMicros"'],
  },
  { command: /ScheduleService\/CreateSchedule$/u, output: ['"nextFireAtMs"'] },
  { command: /"cron":"30 8 \* \* 1-5"/u, output: ['"upcomingMs"'] },
  { command: /ScheduleService\/ListSchedules$/u, output: ['"weekday-standup"', '"reminder"'] },
  { command: /ScheduleService\/PauseSchedule$/u, output: ['"paused": true', '"holidays"'] },
  { command: /Health\/Check$/u, output: ['"status": "SERVING"'] },
  { command: /CreateWebhookEndpoint$/u, output: ["whsec_"] },
  { command: /^curl .*SessionService\/GetSession$/u, output: ['"session"', '"sessionId":"demo"'] },
  { command: /^curl .*\/v1\/agents$/u, output: ['"object":"agent"', '"name":"helper"'] },
  { command: /^curl .*\/v1\/agents\?limit=5'$/u, output: ['"object":"list"', '"has_more":false'] },
  { command: /^curl .*\/v1\/agents\/sessions$/u, output: ['"object":"agent.session"', '"sess_'] },
  { command: /^curl .*Idempotency-Key.*\/events$/u, output: ["202"] },
  { command: /^curl .*\/v1\/agents\/sessions\/<session id>$/u, output: ['"team":"docs"'] },
  { command: /^curl .*\/v1\/agents\/sessions\?limit=5'$/u, output: ['"object":"list"', '"sess_'] },
  {
    command: /^curl .*\/v1\/agents\/automations$/u,
    output: ['"object":"agent.automation"', '"status":"active"'],
  },
  {
    command: /^curl .*\/invocations$/u,
    output: ['"source":{"type":"manual"}', '"status":"queued"'],
  },
  { command: /^curl .*\/automations\?limit=5'$/u, output: ['"object":"list"', '"auto_'] },
];

/** The output a streaming command must end with, by what it sent. */
const STREAM_SHOWN: { command: RegExp; output: string[]; before?: string }[] = [
  {
    command: /"session_id":"tools"/u,
    output: ['"turnParked"', '"turnResumed"', "lookup returned sunny"],
    before: '"turnParked"',
  },
  { command: /"session_id":"pay"/u, output: ['"toolApprovalRequested"', '"toolCallRequested"'] },
  { command: /"session_id":"s1"/u, output: ['"toolCallRequested"', "lookup returned 42"] },
];

describe("the README's examples", () => {
  let grpcurlDir = "";
  let server: ChildProcess | undefined;
  let address = "";
  let serverLog = "";

  async function stopServer(): Promise<void> {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Starts the server as the README's start line does (`npm start` is the production build). */
  async function startServer(startLine: string): Promise<void> {
    await stopServer();
    const script = startLine.replace(
      /\bnpm start\b/u,
      'exec node --enable-source-maps "$README_DIST/server/main.js"',
    );
    const child = spawn("bash", ["-c", script], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/tmp",
        README_DIST: distDir,
        TETHER_HOST: "127.0.0.1",
        TETHER_PORT: "0",
        TETHER_METRICS_PORT: "0",
        TETHER_LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    server = child;
    serverLog = "";
    address = await new Promise<string>((resolveAddress, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line:\n${serverLog}`)), 30_000);
      const onData = (b: Buffer) => {
        serverLog += b.toString();
        const match = /tether listening on (127\.0\.0\.1:\d+)/u.exec(serverLog);
        if (match?.[1]) {
          clearTimeout(timer);
          resolveAddress(match[1]);
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("exit", (code) => reject(new Error(`server exited ${code}:\n${serverLog}`)));
    });
  }

  const env = () => ({ ...process.env, PATH: `${grpcurlDir}:${process.env.PATH ?? ""}` });
  const onServer = (command: string) =>
    command.replaceAll("127.0.0.1:50051", address).replaceAll("localhost:50051", address);

  beforeAll(async () => {
    // Installs grpcurl on the first run (minutes: it builds from source); seconds after.
    const setup = await mustRun(
      "bash",
      [join(repo, "scripts/setup-interop.sh"), "grpcurl"],
      900_000,
    );
    const grpcurl = /^GRPCURL=(.+)$/mu.exec(setup.stdout)?.[1];
    if (!grpcurl) throw new Error(`setup-interop.sh named no grpcurl:\n${setup.stdout}`);
    grpcurlDir = dirname(grpcurl);
    // The production build, into a directory of its own so it races no other test over dist/.
    await rm(distDir, { recursive: true, force: true });
    await mustRun(
      join(repo, "node_modules/.bin/tsc"),
      ["-p", join(repo, "tsconfig.build.json"), "--outDir", distDir],
      300_000,
    );
    await cp(join(repo, "src/store/redis/lua"), join(distDir, "store/redis/lua"), {
      recursive: true,
    });
  }, 1_200_000);

  afterAll(stopServer);

  it("every API example runs as written, in order, on the embedded default", async () => {
    const blocks = apiBlocks(await readFile(join(repo, "README.md"), "utf8"));
    // The tour's sections: trying it, structured answers, parking, approval, agents, history,
    // budgets, schedules, compaction, MCP, quotas, webhooks, models.
    expect(blocks.length).toBeGreaterThanOrEqual(13);
    // `npm start` on the embedded default, as "Two commands" says.
    await startServer("npm start");
    let ran = 0;
    const made = new Map<string, string>();
    for (const block of blocks) {
      const commands = commandsOf(block);
      const streams: { command: string; child: ChildProcess; output: () => string }[] = [];
      for (const [i, written] of commands.entries()) {
        if (/\bnpm start\b/u.test(written)) {
          await startServer(written);
          continue;
        }
        expect(written, "a README command the test does not know").toMatch(/^(grpcurl|curl) /u);
        let command = onServer(written);
        for (const { placeholder } of MADE_OBJECTS) {
          if (!command.includes(placeholder)) continue;
          const id = made.get(placeholder);
          if (id === undefined) throw new Error(`no ${placeholder} made before ${written}`);
          command = command.replaceAll(placeholder, id);
        }
        if (PLACEHOLDER.test(command)) {
          const stream = streams.at(-1);
          if (!stream) throw new Error(`no stream before ${written}`);
          // The turn must be waiting for its client (parked, where the README says so) before
          // the answer is sent.
          const turnId = await waitForOutput(
            stream.output,
            /"turnId": "([^"]+)"[\s\S]*"tool(Call|Approval)Requested"/u,
          );
          const before = STREAM_SHOWN.find((x) => x.command.test(stream.command))?.before;
          if (before) await waitForOutput(stream.output, new RegExp(escapeRegExp(before), "u"));
          command = command.replace(PLACEHOLDER, turnId);
        }
        const next = commands[i + 1] ?? "";
        if (PLACEHOLDER.test(next)) {
          // Streams until the next command answers it ("from another shell").
          const child = spawn("bash", ["-c", command], { cwd: repo, env: env() });
          let output = "";
          child.stdout.on("data", (b: Buffer) => (output += b.toString()));
          child.stderr.on("data", (b: Buffer) => (output += b.toString()));
          streams.push({ command: written, child, output: () => output });
          continue;
        }
        // A health check is asked again until it shows what the README says it will ("once
        // connected"); every other command runs once.
        let result = await run("bash", ["-c", command], 60_000, env());
        if (/Health\/Check$/u.test(written) && !result.stdout.includes('"SERVING"')) {
          result = await waitFor(
            async () => {
              result = await run("bash", ["-c", command], 60_000, env());
              return result.stdout.includes('"SERVING"') ? result : undefined;
            },
            {
              what: `${written} to show SERVING`,
              timeoutMs: 60_000,
              intervalMs: 500,
              detail: () => result.stdout + result.stderr,
            },
          );
        }
        const context = `${written}\n--- stdout:\n${result.stdout}\n--- stderr:\n${result.stderr}`;
        expect(result.code, context).toBe(0);
        // curl does not fail on an error status; Connect's error body has a code.
        expect(result.stdout, context).not.toMatch(/"code"\s*:/u);
        for (const object of MADE_OBJECTS) {
          const id = object.made.exec(result.stdout)?.[1];
          if (id !== undefined) made.set(object.placeholder, id);
        }
        for (const shown of SHOWN.filter((s) => s.command.test(written))) {
          for (const field of shown.output) expect(result.stdout, context).toContain(field);
        }
        ran++;
      }
      for (const stream of streams) {
        const shown = STREAM_SHOWN.find((s) => s.command.test(stream.command));
        expect(shown, `what ${stream.command} shows`).toBeDefined();
        for (const field of shown?.output ?? []) {
          await waitForOutput(stream.output, new RegExp(escapeRegExp(field), "u"));
        }
        // A stream whose turn still waits for a client (the approval example) is closed here.
        if (stream.child.exitCode === null) stream.child.kill("SIGTERM");
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(40);
  }, 600_000);
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
}

/** Waits (up to 60 s) for `pattern` in the output; answers its first group, or the match. */
async function waitForOutput(output: () => string, pattern: RegExp): Promise<string> {
  const match = await waitFor(() => pattern.exec(output()), {
    what: `${String(pattern)} in the output`,
    timeoutMs: 60_000,
    intervalMs: 50,
    detail: output,
  });
  return match[1] ?? match[0];
}
