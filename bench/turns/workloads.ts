// The turn benchmark's workloads, driven over gRPC (h2c) against one running server. Each turn
// is one StreamTurn call with a short text for the echo model; a turn counts when its stream
// ends with a finished outcome, and anything else stops the benchmark.
import { performance } from "node:perf_hooks";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BusyStrategy } from "../../src/gen/tether/v1/turn_pb.js";
import { TurnService } from "../../src/gen/tether/v1/turn_service_pb.js";

export type TurnClient = ReturnType<typeof createClient<typeof TurnService>>;

export function turnClient(address: string): TurnClient {
  return createClient(TurnService, createGrpcTransport({ baseUrl: `http://${address}` }));
}

export interface TurnTiming {
  /** From the call to the end of its stream. */
  ms: number;
  /** From the call to the first text delta: what a user waits before text appears. */
  ttfdMs: number;
  turnId: string;
}

/** About two echo deltas of 16 characters: a short reply, so the run measures per-turn cost. */
const text = (n: number) => `bench turn number ${n} says hi`;

export async function runTurn(client: TurnClient, sessionId: string, n: number) {
  const t0 = performance.now();
  let ttfdMs = Number.NaN;
  let turnId = "";
  let finished = false;
  for await (const response of client.streamTurn({
    sessionId,
    input: [{ kind: { case: "text", value: text(n) } }],
  })) {
    const event = response.event;
    if (event?.event.case === "textDelta" && Number.isNaN(ttfdMs)) {
      ttfdMs = performance.now() - t0;
    }
    if (event?.event.case === "turnCompleted") {
      turnId = event.turnId;
      finished = event.event.value.outcome?.kind.case === "finished";
    }
  }
  if (!finished) throw new Error(`${sessionId}: turn ${n} did not finish`);
  return { ms: performance.now() - t0, ttfdMs, turnId } satisfies TurnTiming;
}

export interface Throughput {
  turns: number;
  seconds: number;
  turnsS: number;
  timings: TurnTiming[];
}

/** `sessions` sessions at once, each running `turnsEach` turns back to back. */
export async function concurrentTurns(
  client: TurnClient,
  prefix: string,
  sessions: number,
  turnsEach: number,
): Promise<Throughput> {
  const timings: TurnTiming[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let n = 0; n < turnsEach; n++) timings.push(await runTurn(client, `${prefix}-${s}`, n));
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { turns: timings.length, seconds, turnsS: timings.length / seconds, timings };
}

export interface EnqueueResult {
  inputs: number;
  /** Turns that consumed them (several queued inputs may enter one turn). */
  turns: number;
  seconds: number;
  msPerInput: number;
}

/** `inputs` StreamTurn calls at once on one idle session: one runs, the rest queue behind it. */
export async function enqueuedInputs(
  client: TurnClient,
  sessionId: string,
  inputs: number,
): Promise<EnqueueResult> {
  const t0 = performance.now();
  const timings = await Promise.all(
    Array.from({ length: inputs }, (_, n) => runTurn(client, sessionId, n)),
  );
  const seconds = (performance.now() - t0) / 1000;
  return {
    inputs,
    turns: new Set(timings.map((t) => t.turnId)).size,
    seconds,
    msPerInput: (seconds * 1000) / inputs,
  };
}

/** `count` turns back to back on one session; their timings in order. */
export async function sequentialTurns(
  client: TurnClient,
  sessionId: string,
  count: number,
  firstN = 0,
): Promise<TurnTiming[]> {
  const timings: TurnTiming[] = [];
  for (let n = 0; n < count; n++) timings.push(await runTurn(client, sessionId, firstN + n));
  return timings;
}

const lookupTool = {
  name: "lookup",
  description: "answered by the benchmark",
  parametersJsonSchema: "",
};

/**
 * One turn that asks for a client tool (the `scripted-tools` model's `/tool` command) and gets
 * the answer at once through SubmitToolResults. With `steer`, a second input joins the running
 * turn (busy strategy steer) while it waits for the answer, which is sent once the steer is in.
 */
export async function toolTurn(
  client: TurnClient,
  sessionId: string,
  n: number,
  steer = false,
): Promise<void> {
  let finished = false;
  let steered: Promise<void> | undefined;
  for await (const response of client.streamTurn({
    sessionId,
    input: [{ kind: { case: "text", value: `/tool lookup {"n":${n}}` } }],
    clientTools: [lookupTool],
  })) {
    const event = response.event;
    if (event?.event.case === "toolCallRequested") {
      const answer = { callId: event.event.value.callId, output: "ok", isError: false };
      if (steer) steered = steerInto(client, sessionId, n);
      if (steered) await steered;
      await client.submitToolResults({ sessionId, turnId: event.turnId, results: [answer] });
    }
    if (event?.event.case === "turnCompleted") {
      finished = event.event.value.outcome?.kind.case === "finished";
    }
  }
  if (!finished) throw new Error(`${sessionId}: tool turn ${n} did not finish`);
}

/**
 * A client tool turn whose answer waits for `release`: the turn holds its session's lease all
 * that time. `requested` is called once the call reached the client.
 */
export async function heldToolTurn(
  client: TurnClient,
  sessionId: string,
  requested: () => void,
  release: Promise<void>,
): Promise<void> {
  let finished = false;
  for await (const response of client.streamTurn({
    sessionId,
    input: [{ kind: { case: "text", value: `/tool lookup {"n":0}` } }],
    clientTools: [lookupTool],
  })) {
    const event = response.event;
    if (event?.event.case === "toolCallRequested") {
      requested();
      await release;
      const answer = { callId: event.event.value.callId, output: "ok", isError: false };
      await client.submitToolResults({ sessionId, turnId: event.turnId, results: [answer] });
    }
    if (event?.event.case === "turnCompleted") {
      finished = event.event.value.outcome?.kind.case === "finished";
    }
  }
  if (!finished) throw new Error(`${sessionId}: held tool turn did not finish`);
}

/** A steered input: resolves once the server queued it (its stream goes on in the background). */
function steerInto(client: TurnClient, sessionId: string, n: number): Promise<void> {
  return new Promise((resolve, reject) => {
    void (async () => {
      try {
        for await (const response of client.streamTurn({
          sessionId,
          input: [{ kind: { case: "text", value: text(n) } }],
          busyStrategy: BusyStrategy.STEER,
        })) {
          if (response.event?.event.case === "inputQueued") resolve();
        }
        resolve();
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    })();
  });
}
