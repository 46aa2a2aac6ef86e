// Automations through the official Python SDK (openai 3.63.0, in the .venv-sdk that
// scripts/setup-python-sdk.sh makes), as python-sdk.test.ts drives its scripts: test/python/
// automations.py runs once against the real server (its real clock and schedule poller: a once
// automation a few seconds ahead is waited for with a bound) and prints its findings as one JSON
// line; every object it read passed the SDK's strict response validation.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SessionService } from "../../../src/gen/tether/v1/session_service_pb.js";
import { TranscriptMessage_Role as Role } from "../../../src/gen/tether/v1/transcript_pb.js";
import { startWiredServer, type WiredServer } from "../../support/wired-server.js";

const PYTHON = resolve(".venv-sdk/bin/python");
/** The script's whole run (a 3 s once automation and a few waits), far above it. */
const SCRIPT_TIMEOUT_MS = 80_000;

let server: WiredServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the script's findings, checked below
type Findings = Record<string, any>;

async function runScript(s: WiredServer, script: string): Promise<Findings> {
  if (!existsSync(PYTHON)) {
    throw new Error(`${PYTHON} is missing: run bash scripts/setup-python-sdk.sh`);
  }
  const path = resolve("test/python", script);
  const { stdout } = await promisify(execFile)(PYTHON, [path], {
    cwd: resolve("test/python"),
    timeout: SCRIPT_TIMEOUT_MS,
    env: { PATH: process.env.PATH ?? "", TETHER_DOOR_URL: `${s.baseUrl}/v1` },
  }).catch((error: unknown) => {
    const failed = error as { stderr?: string; message: string };
    throw new Error(`${path} failed: ${failed.message}\n${failed.stderr ?? ""}`);
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Findings;
}

const refusal = (param: string | null, cls = "BadRequestError", status = 400) => ({
  class: cls,
  status,
  param,
});

describe("automations through the Python SDK (openai 3.63.0), strictly validated", () => {
  it(
    "periodic on an existing session and once on a new session: CRUD, paged lists, pause and resume, a keyed manual invocation, and the error classes",
    { timeout: 100_000 },
    async () => {
      server = await startWiredServer({ TETHER_PROVIDER: "scripted-tools" });
      const r = await runScript(server, "automations.py");
      expect(r.periodic).toMatchObject({
        object: "agent.automation",
        type: "periodic",
        name: "yearly report",
        expression: "0 9 1 1 *",
        timezone: "Europe/Paris",
        metadata: { team: "ops" },
        status: "active",
        pause_reason: null,
        target: { type: "existing_session", instructions: "report" },
      });
      expect(r.retrieved_same).toBe(true);
      expect(r.updated).toEqual({
        expression: "0 10 1 1 *",
        metadata: { team: "sre" },
        name: "yearly report",
      });
      // Auto-paged by 2: newest first on the first session, oldest first on the other.
      const [periodic, m0, m1, m2, m3] = r.created as string[];
      expect(r.listed).toEqual([m2, m0, periodic]);
      expect(r.listed_asc).toEqual([m1, m3]);
      expect(r.keyed_same).toBe(true);
      expect(r.paused).toEqual({ status: "paused", pause_reason: null });
      expect(r.resumed).toBe("active");

      const manual = { automation_id: periodic, source: { type: "manual" }, scheduled_at: null };
      expect(r.manual_queued).toMatchObject(manual);
      expect(r.manual_done).toMatchObject({
        ...manual,
        id: r.manual_queued.id,
        status: "completed",
      });
      // Retried under its key after the fire: the same invocation as it is now, not a second one.
      expect(r.manual_retried).toEqual(r.manual_done);
      expect(r.invocations_listed).toEqual([r.manual_queued.id]);

      expect(r.once).toMatchObject({
        type: "once",
        name: "soon",
        status: "active",
        target: { type: "new_session", metadata: { made_by: "automation" }, agent: null },
      });
      expect(r.once_completed).toBe(true);
      expect(r.once_runs).toHaveLength(1);
      expect(r.once_runs[0]).toMatchObject({
        status: "completed",
        scheduled_at: r.once.run_at,
        source: { type: "automation", automation: { id: r.once.id, status: "completed" } },
      });

      expect(r.deleted).toEqual({ id: m0, object: "agent.automation.deleted", deleted: true });
      expect(r.not_found).toMatchObject(refusal(null, "NotFoundError", 404));
      expect(r.bad_cron).toMatchObject(refusal("expression"));
      expect(r.bad_zone).toMatchObject(refusal("timezone"));
      expect(r.late_run_at).toMatchObject(refusal("run_at"));
      expect(r.hosted).toMatchObject(refusal("target.environment.type"));
      expect(r.unknown_session).toMatchObject(refusal(null, "NotFoundError", 404));
      expect(r.unknown_invocation).toMatchObject(refusal(null, "NotFoundError", 404));

      // Behind the SDK: the existing session took the manual fire's instructions once.
      const sessions = createClient(SessionService, server.as());
      const { messages } = await sessions.listMessages({
        sessionId: r.periodic.target.session_id as string,
      });
      const asked = messages
        .filter((m) => m.role === Role.USER)
        .flatMap((m) => m.parts.map((p) => (p.kind.case === "text" ? p.kind.value : "")));
      expect(asked).toEqual(["report"]);
    },
  );
});
