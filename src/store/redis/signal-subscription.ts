// The replica's one pattern subscription to every session's signal channel (signals.ts), and how
// sure it is of having heard everything sent since a moment: `hearing` while the subscription is
// in effect, and an epoch that moves whenever something sent may have gone unheard (ADR 0041).
import type { Cluster, Redis } from "ioredis";
import { readerConnection } from "./connections.js";

export interface SignalSubscription {
  /** Subscribes once (a failed attempt is retried by the next call); resolves when in effect. */
  subscribe(): Promise<unknown>;
  /** The epoch while the subscription is in effect; undefined otherwise. */
  hearingEpoch(): number | undefined;
  /** Something sent may have gone unheard (a kept signal was dropped): the epoch moves. */
  missed(): void;
  close(): void;
}

export function createSignalSubscription(
  redis: Redis | Cluster,
  pattern: string,
  onMessage: (channel: string, raw: string) => void,
): SignalSubscription {
  let subscriber: Redis | Cluster | undefined;
  let subscribed: Promise<unknown> | undefined;
  let hearing = false;
  let epoch = 0;

  const subscribe = (): Promise<unknown> => {
    if (subscribed) return subscribed;
    const conn = readerConnection(redis);
    conn.on("pmessage", (_pattern: string, channel: string, raw: string) =>
      onMessage(channel, raw),
    );
    conn.on("close", () => {
      hearing = false;
      epoch += 1;
    });
    // Back after a reconnect: heard again once a subscription made after it is in effect (the
    // first ready is the first connect, which the subscription below waits for).
    let connected = false;
    conn.on("ready", () => {
      const reconnected = connected;
      connected = true;
      if (!reconnected || subscribed === undefined || hearing) return;
      conn.psubscribe(pattern).then(
        () => {
          if (subscriber === conn) hearing = true;
        },
        () => undefined,
      );
    });
    subscriber = conn;
    subscribed = conn.psubscribe(pattern).then(
      (count) => {
        hearing = true;
        return count;
      },
      (error: unknown) => {
        // The next listener tries again.
        subscribed = undefined;
        subscriber = undefined;
        conn.disconnect();
        throw error;
      },
    );
    return subscribed;
  };

  return {
    subscribe,
    hearingEpoch: () => (hearing ? epoch : undefined),
    missed: () => {
      epoch += 1;
    },
    close() {
      hearing = false;
      epoch += 1;
      subscriber?.disconnect();
      subscriber = undefined;
      subscribed = undefined;
    },
  };
}
