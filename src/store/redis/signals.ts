// Turn signals across replicas on Redis: the running turn's id in a key with the lease's TTL,
// cancel requests and client tool results both stored (so a listener that subscribes late still
// finds them) and published on the session's channel (so a live listener hears them at once).
import type { Cluster, Redis } from "ioredis";
import type { SessionId } from "../../domain/ids.js";
import type { ApprovalDecision } from "../../domain/tool-calls.js";
import type {
  ClientToolResult,
  SessionSignals,
  TurnListener,
} from "../../ports/session-signals.js";
import { sessionEventKeys } from "./keys.js";
import { withStoreErrors as guarded } from "./connections.js";
import { createSignalSubscription } from "./signal-subscription.js";
import { createScriptRunner } from "./scripts.js";

export interface RedisSignalsOptions {
  redis: Redis | Cluster;
  namespace?: string;
  /** How long cancel markers and tool results outlive their message. */
  retentionMs?: number;
}

/** Every session's signal channel of the namespace (keys.ts), glob characters escaped. */
function channelPattern(namespace: string): string {
  return `${namespace.replace(/[*?[\]\\]/gu, (c) => `\\${c}`)}:{*}:signals`;
}

type Message =
  | { type: "cancel"; turnId: string }
  | { type: "tool_result"; turnId: string; result: ClientToolResult }
  | { type: "decision"; turnId: string; decision: ApprovalDecision }
  // Published by submitInput's step for a new steer (submitInput-8.lua, ADR 0041).
  | { type: "steer"; turnId: string };

/**
 * A stored signal, as listenTurn replays it: a decision has `approve`, a result has not. In the
 * turn's hash a result is keyed by its call id and a decision by `<call id> approval` (ids hold
 * no whitespace), so a call's result and its decision never overwrite each other.
 */
function replay(listener: TurnListener, raw: string): void {
  const stored = JSON.parse(raw) as ClientToolResult | ApprovalDecision;
  if ("approve" in stored) listener.onDecision(stored);
  else listener.onToolResult(stored);
}

function deliver(listener: TurnListener, message: Message): void {
  if (message.type === "cancel") listener.onCancel();
  else if (message.type === "decision") listener.onDecision(message.decision);
  else if (message.type === "steer") listener.onSteer?.();
  else listener.onToolResult(message.result);
}

/** How long, and how many, signals no listener took are kept for one that starts late. */
const UNHEARD_KEEP_MS = 10_000;
const UNHEARD_MAX = 256;

/**
 * Signals heard for a turn with no listener here yet: the replica hears every session's, and a
 * turn marked running in its start's step registers its listener a moment after the mark.
 * Bounded by age and count; most are for sessions other replicas run, and simply age out.
 */
function createUnheardSignals(onSteerDropped: () => void) {
  let kept: { channel: string; message: Message; at: number }[] = [];
  return {
    keep(channel: string, message: Message): void {
      const now = Date.now();
      const fresh = kept.filter((k) => now - k.at < UNHEARD_KEEP_MS).slice(-(UNHEARD_MAX - 1));
      // A steer dropped unheard may be for a turn yet to listen: its hearing is no longer sure.
      if (countSteers(fresh) < countSteers(kept)) onSteerDropped();
      kept = fresh;
      kept.push({ channel, message, at: now });
    },
    take(channel: string, turnId: string): Message[] {
      const mine = (k: (typeof kept)[number]) =>
        k.channel === channel && k.message.turnId === turnId;
      const taken = kept.filter(mine).map((k) => k.message);
      if (taken.length > 0) kept = kept.filter((k) => !mine(k));
      return taken;
    },
  };
}

const countSteers = (kept: { message: Message }[]): number =>
  kept.filter((k) => k.message.type === "steer").length;

export function createRedisSignals(options: RedisSignalsOptions): SessionSignals {
  const { redis } = options;
  const scripts = createScriptRunner(redis);
  const namespace = options.namespace ?? "tether";
  const retentionMs = options.retentionMs ?? 10 * 60_000;
  const listeners = new Map<string, Map<string, TurnListener>>();

  const keysOf = (sessionId: SessionId) => sessionEventKeys(namespace, sessionId);
  // Steer hearing (ADR 0041): `hearing` while the pattern subscription is in effect; `epoch`
  // moves whenever something sent may have gone unheard (the subscriber connection closed, or
  // a steer no listener took was dropped). On Cluster a node's publish reaches this replica
  // through another node and the subscriber's own reconnects are not seen here: not offered.
  const isCluster = "isCluster" in redis && redis.isCluster;
  const unheard = createUnheardSignals(() => subscription.missed());

  // One pattern subscription per replica, made by the first listener and kept: a turn then costs
  // no SUBSCRIBE and UNSUBSCRIBE of its own. The replica hears every session's signals; they are
  // few (cancels, tool results, steers), and those of sessions it does not run are dropped here.
  const subscription = createSignalSubscription(
    redis,
    channelPattern(namespace),
    (channel, raw) => {
      let message: Message;
      try {
        message = JSON.parse(raw) as Message;
      } catch {
        return;
      }
      const listener = listeners.get(channel)?.get(message.turnId);
      if (listener) deliver(listener, message);
      else unheard.keep(channel, message);
    },
  );
  const subscribe = subscription.subscribe;

  /** Stores the signals for a listener that subscribes late, then publishes each. */
  const publish = (
    sessionId: SessionId,
    turnId: string,
    signals: { field: string; message: Message; stored: ClientToolResult | ApprovalDecision }[],
  ): Promise<boolean> =>
    guarded(async () => {
      const keys = keysOf(sessionId);
      if ((await redis.get(keys.activeTurn)) !== turnId) return false;
      const stored = keys.toolResults(turnId);
      const fields = signals.flatMap((s) => [s.field, JSON.stringify(s.stored)]);
      await redis
        .multi()
        .hset(stored, ...fields)
        .pexpire(stored, retentionMs)
        .exec();
      for (const signal of signals) {
        await redis.publish(keys.channel, JSON.stringify(signal.message));
      }
      return true;
    });

  return {
    activeTurn: (sessionId) =>
      guarded(async () => (await redis.get(keysOf(sessionId).activeTurn)) ?? undefined),

    requestCancel: (sessionId, turnId) =>
      guarded(async () => {
        const keys = keysOf(sessionId);
        const running = await redis.get(keys.activeTurn);
        if (running === null || (turnId !== undefined && turnId !== running)) return false;
        await redis.set(keys.cancel(running), "1", "PX", retentionMs);
        await redis.publish(
          keys.channel,
          JSON.stringify({ type: "cancel", turnId: running } satisfies Message),
        );
        return true;
      }),

    submitToolResults: (sessionId, turnId, results) =>
      publish(
        sessionId,
        turnId,
        results.map((result) => ({
          field: result.callId,
          message: { type: "tool_result", turnId, result },
          stored: result,
        })),
      ),

    submitDecisions: (sessionId, turnId, decisions) =>
      publish(
        sessionId,
        turnId,
        decisions.map((decision) => ({
          field: `${decision.callId} approval`,
          message: { type: "decision", turnId, decision },
          stored: decision,
        })),
      ),

    hearAllSessions: async () => {
      await guarded(subscribe);
    },

    steerHearing: () => (isCluster ? undefined : subscription.hearingEpoch()),

    // This replica's own submit: its listener hears the steer now; one not listening yet takes
    // it when it does (kept as a heard signal is).
    steerNotice: () => (sessionId, turnId) => {
      const channel = keysOf(sessionId).channel;
      const message: Message = { type: "steer", turnId };
      const listener = listeners.get(channel)?.get(turnId);
      if (listener) deliver(listener, message);
      else unheard.keep(channel, message);
    },

    listen: (sessionId, turnId, listener, activeTtlMs, options) =>
      guarded(async () => {
        const keys = keysOf(sessionId);
        await subscribe();
        let forChannel = listeners.get(keys.channel);
        if (!forChannel) {
          forChannel = new Map();
          listeners.set(keys.channel, forChannel);
        }
        forChannel.set(turnId, listener);
        if (options?.markedRunning) {
          // Marked in the turn start's step, heard since (hearAllSessions): what came between
          // was kept, in the order it came, and is handed over in the same tick as the
          // registration, so nothing falls between the two.
          for (const message of unheard.take(keys.channel, turnId)) deliver(listener, message);
        } else {
          // One step marks the turn running and reads the signals sent before the subscription
          // took effect (they are in the keys).
          const reply = await scripts.run(
            "listenTurn",
            [keys.activeTurn, keys.cancel(turnId), keys.toolResults(turnId)],
            [turnId, Math.max(1, activeTtlMs)],
          );
          if (reply[1] === 1) listener.onCancel();
          for (const raw of reply.slice(2)) replay(listener, String(raw));
        }
        return async (options) => {
          const current = listeners.get(keys.channel);
          if (current?.get(turnId) === listener) {
            current.delete(turnId);
            if (current.size === 0) listeners.delete(keys.channel);
          }
          if (options?.signalsCleared) return;
          await scripts
            .run(
              "unlistenTurn",
              [keys.activeTurn, keys.cancel(turnId), keys.toolResults(turnId)],
              [turnId],
            )
            .catch(() => undefined);
        };
      }),

    async close() {
      listeners.clear();
      subscription.close();
    },
  };
}
