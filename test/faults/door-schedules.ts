// The fault suite's schedules made through the front door (ADR 0037, "Automations"): a share of
// the one-off schedules (schedules.ts) are `once` automations created with
// `POST /v1/agents/automations` on a random replica, as an SDK would, targeting their own existing
// session like the gRPC ones. `run_at` is Unix seconds, so the planned instant is taken up to the
// next whole second and the answer must show it unchanged. Each create carries an
// Idempotency-Key that all of its attempts share; an error or a lost connection is retried on
// another replica; a refusal that precedes any effect (400, 401, 403, 404, 422) ends the plan. After
// the run each is judged as a gRPC schedule is: its scheduled invocations (`GET …/invocations`)
// and the instructions in its session's transcript must number exactly one, at the planned
// instant, and only one automation may target the session (a create repeated by a retry would be
// a second).
import { sleep } from "../support/wait-for.js";
import type { VerificationReads } from "./verify-reads.js";

/** Answers that refuse before any effect: the create is not retried. */
const DEFINITE = new Set([400, 401, 403, 404, 422]);
const REQUEST_TIMEOUT_MS = 10_000;
/** A door create whose instant is nearer than this is moved later (run_at must be future). */
const LEAD_MS = 3_000;

export interface DoorPlan {
  automationId: string;
  /** The planned instant, a whole second (run_at * 1000). */
  atMs: number;
}

export interface DoorVerdict {
  fired: number;
  /** The invocations' delay past the planned instant, at their seconds' resolution. */
  delaysMs: number[];
  /** Why the occurrence counts as missed or duplicated, if it does. */
  missed?: string;
  duplicated?: string;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

interface Invocation {
  id: string;
  status: string;
  scheduled_at: number | null;
  created_at: number;
  source: { type: string };
}

async function request(url: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(url, {
    ...init,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Refused(response.status, text);
  return JSON.parse(text) as unknown;
}

/** The planned instant as the door takes it: a whole second, far enough ahead to be future. */
export function doorInstant(plannedMs: number, nowMs: number): number {
  return Math.ceil(Math.max(plannedMs, nowMs + LEAD_MS) / 1000) * 1000;
}

/**
 * Creates the once automation; retried (same key, another replica) until an answer or a definite
 * refusal, within `budgetMs`.
 */
export async function createDoorAutomation(options: {
  addresses: readonly string[];
  name: string;
  sessionId: string;
  text: string;
  plannedMs: number;
  budgetMs: number;
  /** The replica of the first attempt (an index into `addresses`); the next ones follow it. */
  first?: number;
}): Promise<DoorPlan> {
  const atMs = doorInstant(options.plannedMs, Date.now());
  const body = JSON.stringify({
    type: "once",
    name: options.name,
    run_at: atMs / 1000,
    target: { type: "existing_session", session_id: options.sessionId, instructions: options.text },
    metadata: { suite: "faults" },
  });
  const giveUpAt = Date.now() + options.budgetMs;
  let pause = 100;
  for (let attempt = 0; ; attempt++) {
    const at = ((options.first ?? 1) + attempt) % options.addresses.length;
    const base = options.addresses[at] ?? "";
    try {
      const made = (await request(`${base}/v1/agents/automations`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "idempotency-key": `${options.name}-create`,
        },
        body,
      })) as { id: string; type: string; run_at: number; status: string };
      if (made.type !== "once" || made.run_at * 1000 !== atMs || made.status !== "active") {
        throw new Error(
          `${options.name}: created as ${JSON.stringify(made)}, run_at ${atMs / 1000}`,
        );
      }
      return { automationId: made.id, atMs };
    } catch (error) {
      if (error instanceof Refused && DEFINITE.has(error.status)) throw error;
      if (!(error instanceof Refused) && !(error instanceof TypeError) && !isAbort(error)) {
        throw error;
      }
      if (Date.now() > giveUpAt) throw error;
      await sleep(pause);
      pause = Math.min(pause * 2, 2_000);
    }
  }
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError")
  );
}

/** Every invocation the automation keeps (at most 100: one page). */
async function invocationsOf(base: string, automationId: string): Promise<Invocation[]> {
  const page = (await request(
    `${base}/v1/agents/automations/${automationId}/invocations?limit=100`,
  )) as { data: Invocation[] };
  return page.data;
}

/** The automations that target `sessionId` (one expected). */
async function automationsOn(base: string, sessionId: string): Promise<string[]> {
  const page = (await request(
    `${base}/v1/agents/automations?session_id=${encodeURIComponent(sessionId)}&limit=100`,
  )) as { data: { id: string }[] };
  return page.data.map((a) => a.id);
}

/**
 * Reads the automation's scheduled invocations until one settled or `deadlineMs` passed, then
 * judges them with the session's `inputs` (counted by `countInputs`).
 */
export async function judgeDoorAutomation(
  addresses: readonly string[],
  plan: DoorPlan & { sessionId: string },
  deadlineMs: number,
  reads: VerificationReads,
  countInputs: () => Promise<number>,
): Promise<DoorVerdict> {
  const scheduled = async () => {
    const all = await reads.onAny(addresses, (base) => invocationsOf(base, plan.automationId));
    return all.filter((inv) => inv.source.type === "automation");
  };
  let runs = await scheduled();
  let inputs = await countInputs();
  while (!(runs.length > 0 && inputs > 0) && Date.now() <= deadlineMs) {
    await sleep(250);
    runs = await scheduled();
    inputs = await countInputs();
  }
  const targeting = await reads.onAny(addresses, (base) => automationsOn(base, plan.sessionId));
  const verdict: DoorVerdict = {
    fired: runs.length,
    delaysMs: runs.map((r) => r.created_at * 1000 - plan.atMs),
  };
  const seen = `${runs.length} invocation(s) [${runs.map((r) => `${r.id} ${r.status}`).join(", ")}], ${inputs} input(s) in the transcript, ${targeting.length} automation(s) on its session`;
  const offTime = runs.filter((r) => r.scheduled_at !== plan.atMs / 1000);
  if (runs.length === 0 || inputs === 0) verdict.missed = seen;
  else if (runs.length > 1 || inputs > 1 || targeting.length > 1) verdict.duplicated = seen;
  else if (offTime.length > 0 || runs[0]?.status !== "completed") {
    verdict.missed = `${seen}; planned at ${plan.atMs / 1000}`;
  }
  return verdict;
}
