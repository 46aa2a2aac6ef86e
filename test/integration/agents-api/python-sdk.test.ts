// The official Python SDK (openai 3.63.0, in the .venv-sdk that scripts/setup-python-sdk.sh makes)
// against the real server's front door (ADR 0037): each scenario group is one script of
// test/python run once, printing its findings as one JSON line; the test checks them and the
// server's state behind them.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import OpenAI from "openai-agents-sdk";
import { afterEach, describe, expect, inject, it } from "vitest";
import { QuotaLimitKind, QuotaService } from "../../../src/gen/tether/v1/quota_service_pb.js";
import {
  finishedText,
  startToolTurn,
  watchSession,
  type SessionWatch,
} from "./events-in-support.js";
import { waitFor } from "../../support/wait-for.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

const PYTHON = resolve(".venv-sdk/bin/python");
const SCRIPTS = resolve("test/python");
/** A script's whole run, far above its few seconds, for a busy machine. */
const SCRIPT_TIMEOUT_MS = 50_000;

const servers: WiredServer[] = [];
const watches: SessionWatch[] = [];
afterEach(async () => {
  for (const w of watches.splice(0)) w.stop();
  for (const s of servers.splice(0)) await s.close();
});

async function start(env: Record<string, string> = {}) {
  const server = await startWiredServer({ TETHER_PROVIDER: "scripted-tools", ...env });
  servers.push(server);
  return server;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a script's findings, checked below
type Findings = Record<string, any>;

/** Runs test/python/<script> against the server; its last output line is its findings. */
async function runScript(
  s: WiredServer,
  script: string,
  env: Record<string, string> = {},
): Promise<Findings> {
  const stdout = await runPython(resolve(SCRIPTS, script), {
    TETHER_DOOR_URL: `${s.baseUrl}/v1`,
    ...env,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Findings;
}

async function runPython(path: string, env: Record<string, string>): Promise<string> {
  if (!existsSync(PYTHON)) {
    throw new Error(`${PYTHON} is missing: run bash scripts/setup-python-sdk.sh`);
  }
  const { stdout } = await promisify(execFile)(PYTHON, [path], {
    cwd: SCRIPTS,
    timeout: SCRIPT_TIMEOUT_MS,
    env: { PATH: process.env.PATH ?? "", ...env },
  }).catch((error: unknown) => {
    const failed = error as { stderr?: string; message: string };
    throw new Error(`${path} failed: ${failed.message}\n${failed.stderr ?? ""}`);
  });
  return stdout;
}

/** The streams the tenant holds open on the server, by GetQuotaUsage. */
async function openStreams(s: WiredServer): Promise<bigint | undefined> {
  const usage = await createClient(QuotaService, s.as()).getQuotaUsage({});
  return usage.limits.find((l) => l.kind === QuotaLimitKind.CONCURRENT_STREAMS)?.used;
}

const watch = (s: WiredServer, sessionId: string) => {
  const w = watchSession(s.as(), sessionId);
  watches.push(w);
  return w;
};

describe("the Python SDK (openai 3.63.0) on the front door", () => {
  it(
    "agents and sessions: create, retrieve, update, auto-paged lists, delete, and the error classes, all strictly validated",
    { timeout: 60_000 },
    async () => {
      const s = await start();
      const r = await runScript(s, "crud.py");
      expect(r.sdk_version).toBe("3.63.0");
      expect(r.agent).toMatchObject({
        object: "agent",
        model: "gpt-test",
        name: "forecaster",
        instructions: "Answer briefly.",
        metadata: { team: "a" },
        tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }],
        text: { format: { type: "text" }, verbosity: "medium" },
        service_tier: "auto",
      });
      expect(r.retrieved_same).toBe(true);
      expect(r.updated).toEqual({ instructions: null, metadata: { team: "b" } });
      // Pages of 2 and 3, followed by the SDK's auto-pagination: newest first, or oldest first.
      expect(r.agents_listed).toEqual([...r.agents_created].reverse());
      expect(r.agents_listed_asc).toEqual(r.agents_created);
      expect(r.agent_deleted).toEqual({
        id: r.agents_created[1],
        object: "agent.deleted",
        deleted: true,
      });
      expect(r.agent_not_found).toMatchObject({ class: "NotFoundError", status: 404 });
      expect(r.bad_tool).toMatchObject({
        class: "BadRequestError",
        status: 400,
        param: "tools[0].type",
      });

      expect(r.session_idle).toMatchObject({
        id: r.session_created.id,
        object: "agent.session",
        status: "idle",
        agent: { id: r.agents_created[0] },
        metadata: { k: "v" },
        required_actions: [],
        spend_control: { limit: null, consumed: null },
      });
      expect(r.session_updated).toEqual({ k: "w" });
      expect(r.sessions_listed).toEqual([...r.sessions_created].reverse());
      expect(r.sessions_listed_asc).toEqual(r.sessions_created);
      expect(r.sessions_by_metadata).toEqual([r.session_created.id]);
      expect(r.no_environment).toMatchObject({
        class: "BadRequestError",
        param: "environment.type",
      });
      expect(r.delete_running).toMatchObject({
        class: "ConflictError",
        status: 409,
        should_retry: "false",
      });
      expect(r.session_deleted).toMatchObject({ object: "agent.session.deleted", deleted: true });
      expect(r.session_not_found).toMatchObject({ class: "NotFoundError", status: 404 });
      expect(r.key_reused).toMatchObject({ class: "UnprocessableEntityError", status: 422 });
      expect(r.unknown_call).toMatchObject({
        class: "BadRequestError",
        status: 400,
        message: expect.stringContaining("Unknown pending tool call: call-nope"),
      });

      // The server's own view, through the Node SDK: what Python deleted is gone, the rest stays.
      const node = new OpenAI({ baseURL: `${s.baseUrl}/v1`, apiKey: "k", maxRetries: 0 });
      const agents: string[] = [];
      for await (const agent of node.beta.agents.list()) agents.push(agent.id);
      expect(agents).toEqual(
        [...r.agents_created].reverse().filter((id: string) => id !== r.agents_created[1]),
      );
      const keyed = watch(s, r.session_created.id);
      await keyed.next("turnCompleted", (e) => finishedText(e) === "keyed");
      expect(keyed.count("turnStarted")).toBe(2);
    },
  );

  it(
    "streams: sessions.stream with a tool handler and get_final_result(), events.stream before events.create, a resume after a delta, a cancel",
    { timeout: 60_000 },
    async () => {
      const s = await start();
      const r = await runScript(s, "streams.py");

      expect(r.helper.handled).toEqual([{ q: "oslo" }]);
      expect(r.helper.text).toEqual(["lookup returned found oslo"]);
      expect(r.helper.turn_status).toBe("completed");
      expect(r.helper.types).toContain("agent.session.requires_action");
      expect(r.helper.types.slice(-2)).toEqual([
        "agent.session.turn.completed",
        "agent.session.idle",
      ]);
      // The handler's output reached the turn as the call's result.
      const helped = watch(s, r.helper.session);
      const finished = await helped.next("toolCallFinished");
      expect(finished.event.case === "toolCallFinished" && finished.event.value.isError).toBe(
        false,
      );

      const follow = r.follow;
      expect(follow.text).toBe(
        "a sentence long enough to stream in several text deltas, then the end.",
      );
      expect(follow.types[0]).toBe("agent.session.turn.created");
      expect(follow.types.at(-1)).toBe("agent.session.idle");
      expect(r.idle_spend_control).toEqual({ limit: null, consumed: null });
      // The resume after the second delta: the rest of the text (once), then the very events
      // the live stream had after it, with the same ids.
      const upToMid = follow.deltas
        .slice(0, 2)
        .map((d: { delta: string }) => d.delta)
        .join("");
      const replayed = follow.replayed as { id: string; type: string; delta: string | null }[];
      const rest = replayed.filter((e) => e.type === "agent.session.turn.output_text.delta");
      expect(upToMid + rest.map((e) => e.delta).join("")).toBe(follow.text);
      const replayedAfterText = replayed.slice(rest.length).map((e) => e.id);
      expect(replayedAfterText.length).toBeGreaterThan(0);
      expect(follow.after_mid.slice(-replayedAfterText.length)).toEqual(replayedAfterText);

      expect(r.required).toMatchObject([{ type: "function_call", name: "lookup" }]);
      const cancelled = r.cancel.events as { type: string; item?: unknown }[];
      expect(cancelled.map((e) => e.type)).toEqual([
        "agent.session.turn.item.done",
        "agent.session.turn.cancelled",
        "agent.session.idle",
      ]);
      expect(cancelled[0]?.item).toMatchObject({ type: "function_call", status: "incomplete" });
    },
  );

  it(
    "streaming create: sessions.create(stream=True) from agent.session.created to idle, get_final_result(), the create's tool handlers",
    { timeout: 60_000 },
    async () => {
      const s = await start();
      const r = await runScript(s, "stream_create.py");

      expect(r.plain.types[0]).toBe("agent.session.created");
      expect(r.plain.types).toContain("agent.session.turn.output_text.delta");
      expect(r.plain.types.slice(-2)).toEqual([
        "agent.session.turn.completed",
        "agent.session.idle",
      ]);
      expect(r.plain.text).toEqual(["hello from python"]);
      expect(r.plain.turn_status).toBe("completed");

      expect(r.tooled.handled).toEqual([{ q: "bergen" }]);
      expect(r.tooled.text).toEqual(["lookup returned found bergen"]);
      expect(r.tooled.turn_status).toBe("completed");
      // The handler's output reached the turn as the call's result.
      const w = watch(s, r.tooled.session);
      const finished = await w.next("toolCallFinished");
      expect(finished.event.case === "toolCallFinished" && finished.event.value.isError).toBe(
        false,
      );
    },
  );

  it(
    "answers to parked turns: an approval read as the SDK types it and approved, the call answered while events.stream follows, a denial",
    { timeout: 60_000 },
    async () => {
      // Turns that wait only for a client park at once.
      const s = await start({ TETHER_PARK_AFTER_MS: "0" });
      const approve = await startToolTurn(s.as(), "py-approve", true);
      await startToolTurn(s.as(), "py-deny", true);
      const r = await runScript(s, "answers.py", {
        APPROVE_SESSION: "py-approve",
        DENY_SESSION: "py-deny",
      });
      expect(r.approval_required).toEqual([
        {
          type: "mcp_approval_request",
          request_id: approve.callId,
          turn_id: approve.turnId,
          request: expect.objectContaining({
            type: "mcp_tool_call",
            name: "lookup",
            server_label: "client",
          }),
        },
      ]);
      expect(r.call_required).toMatchObject({
        type: "function_call",
        call_id: approve.callId,
        turn_id: approve.turnId,
      });
      expect(r.text).toBe("lookup returned approved and done");
      expect(r.approve_types.slice(-2)).toEqual([
        "agent.session.turn.completed",
        "agent.session.idle",
      ]);
      expect(r.denied_status).toBe("idle");
      const denied = watch(s, "py-deny");
      expect(finishedText(await denied.next("turnCompleted"))).toContain(
        "The user denied this tool call.",
      );
      expect(denied.count("toolCallRequested")).toBe(0);
    },
  );

  it(
    "quota 429s: RateLimitError with retry-after-ms; with retries the SDK waits it out and gets through; a stream past concurrent_streams",
    { timeout: 60_000 },
    async () => {
      const s = await start({
        TETHER_PARK_AFTER_MS: "600000",
        TETHER_QUOTAS: JSON.stringify({
          default: { concurrent_turns: { max: 1, mode: "reject" }, concurrent_streams: 1 },
        }),
      });
      const holder = await startToolTurn(s.as(), "py-holder");
      const r = await runScript(s, "quota.py", {
        HOLDER_SESSION: "py-holder",
        HOLDER_TURN: holder.turnId,
        HOLDER_CALL: holder.callId,
      });
      for (const refused of [r.message, r.create]) {
        expect(refused).toMatchObject({
          class: "RateLimitError",
          status: 429,
          code: "quota_exhausted",
          retry_after_ms: "1000",
        });
      }
      // The refused create made no session (only the holder, made over gRPC, is there: not
      // listed by the door, which lists the sessions it made).
      expect(r.sessions_after).toEqual([]);
      expect(r.attempts[0]).toEqual({ status: 429, retry: "0" });
      expect(r.attempts.at(-1).status).toBe(202);
      // retry-after-ms honoured: the SDK's own first backoff is about half a second.
      expect(r.waited_s).toBeGreaterThanOrEqual(0.95);
      expect(r.second_stream).toMatchObject({
        class: "RateLimitError",
        status: 429,
        retry_after_ms: "1000",
      });
      // The script's streams are gone (their slot too) before this test's own watch opens.
      await waitFor(async () => (await openStreams(s)) === 0n, { what: "the streams to close" });
      const other = watch(s, "py-other");
      expect(finishedText(await other.next("turnCompleted"))).toBe("after the wait");
    },
  );

  it(
    "two replicas: a call seen on A's closed stream is answered through B after the turn parked; resumes on either replica replay the rest",
    { timeout: 60_000 },
    async () => {
      const run = Date.now().toString(36);
      const replica = (owner: string) =>
        start({
          TETHER_STORE: "redis",
          TETHER_REDIS_URL: inject("redisUrl"),
          TETHER_OWNER_ID: `${owner}-${run}`,
          TETHER_PARK_AFTER_MS: "0",
        });
      const a = await replica("py-a");
      const b = await replica("py-b");
      const r = await runScript(a, "replicas.py", { TETHER_DOOR_URL_B: `${b.baseUrl}/v1` });
      expect(r.read_on_b).toBe(true);
      expect(r.call).toEqual({ name: "lookup", arguments: { q: "far" } });
      expect(r.parked_on_b).toMatchObject([{ type: "function_call", name: "lookup" }]);
      type Seen = { id: string; type: string; delta: string | null };
      const onB = r.on_b as Seen[];
      const text = (events: Seen[]) =>
        events
          .filter((e) => e.type === "agent.session.turn.output_text.delta")
          .map((e) => e.delta)
          .join("");
      // Gapless from A's last event: the call's output, the call done, the session going on, the
      // answer, idle.
      expect(onB.slice(0, 3).map((e) => e.type)).toEqual([
        "agent.session.turn.item.added",
        "agent.session.turn.item.done",
        "agent.session.in_progress",
      ]);
      expect(text(onB)).toBe("lookup returned answered on b");
      expect(onB.slice(-2).map((e) => e.type)).toEqual([
        "agent.session.turn.completed",
        "agent.session.idle",
      ]);
      // A's resume after B's first delta: the rest of the text, then B's very events.
      const resumed = r.resumed_on_a as Seen[];
      const firstDelta = onB.find((e) => e.type === "agent.session.turn.output_text.delta");
      expect((firstDelta?.delta ?? "") + text(resumed)).toBe("lookup returned answered on b");
      const afterText = resumed.filter((e) => e.type !== "agent.session.turn.output_text.delta");
      expect(onB.slice(-afterText.length)).toEqual(afterText);
      const w = watch(b, r.session);
      expect(finishedText(await w.next("turnCompleted"))).toBe("lookup returned answered on b");
    },
  );

  it(
    "the README's Python example runs as written (its address pointed at this server)",
    { timeout: 60_000 },
    async () => {
      const s = await start();
      const readme = readFileSync(resolve("README.md"), "utf8");
      const blocks = [...readme.matchAll(/```python\n([\s\S]*?)```/gu)].map((m) => m[1] ?? "");
      expect(blocks).toHaveLength(1);
      const example = blocks[0]!.replace("http://127.0.0.1:50051/v1", `${s.baseUrl}/v1`);
      expect(example).toContain(s.baseUrl);
      const path = join(mkdtempSync(join(tmpdir(), "readme-py-")), "example.py");
      writeFileSync(path, example);
      // The scripted model echoes the input.
      expect(await runPython(path, {})).toBe("Weather in Oslo?\n");
    },
  );
});
