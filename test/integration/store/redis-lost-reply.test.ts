// A write whose reply is lost (Redis or the network drops the connection after running it) must
// not run a second time when the connection comes back: a resent log append would announce a turn
// twice. The replica's connection settings make such a call fail as UNAVAILABLE instead.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { isTetherError } from "../../../src/domain/errors.js";
import { parseSessionId } from "../../../src/domain/ids.js";
import { replicaConnectionOptions } from "../../../src/store/redis/connections.js";
import { createRedisEventLog } from "../../../src/store/redis/event-log.js";
import { freshNamespace } from "../../support/redis-store-factory.js";
import {
  startReplyDroppingProxy,
  type ReplyDroppingProxy,
} from "../../support/reply-dropping-proxy.js";

let proxy: ReplyDroppingProxy;

beforeAll(async () => {
  proxy = await startReplyDroppingProxy(Number(new URL(inject("redisUrl")).port));
});
afterAll(async () => {
  await proxy.close();
});

describe("a reply lost with the connection", () => {
  it("fails the log append as unavailable and leaves exactly one entry", async () => {
    const redis = new Redis(
      proxy.port,
      "127.0.0.1",
      replicaConnectionOptions({ commandTimeoutMs: 1_000 }),
    );
    const log = createRedisEventLog({ redis, namespace: freshNamespace("lost-reply") });
    const session = parseSessionId("lost-reply-session");
    try {
      // The first append loads the script, so the dropped reply below is the append's own.
      await log.append(session, [{ turnId: "t1", event: { type: "text_delta", text: "one" } }]);
      proxy.dropNextReply();
      const dropsBefore = proxy.dropped();
      const lost = await log
        .append(session, [{ turnId: "t1", event: { type: "text_delta", text: "two" } }])
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(proxy.dropped()).toBe(dropsBefore + 1);
      expect(isTetherError(lost, "store_unavailable"), String(lost)).toBe(true);

      // The connection comes back on its own, and the append ran exactly once.
      const read = await log.read(session, 0, 10);
      expect(read.entries.map((e) => e.event)).toEqual([
        { type: "text_delta", text: "one" },
        { type: "text_delta", text: "two" },
      ]);
      expect(await log.lastSeq(session)).toBe(2);
    } finally {
      await log.close();
      redis.disconnect();
    }
  });
});
