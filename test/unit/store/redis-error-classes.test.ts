// How the Redis store classifies a failed call: unavailable (retryable, UNAVAILABLE at the API)
// or internal. A transaction refused while a cluster node restarts is unavailable, not internal
// (the fault suite saw EXECABORT reach clients as INTERNAL during a master restart).
import { describe, expect, it } from "vitest";
import { toStoreError } from "../../../src/store/redis/scripts.js";

function replyError(message: string, previousErrors?: Error[]): Error {
  const error = new Error(message);
  error.name = "ReplyError";
  if (previousErrors) Object.assign(error, { previousErrors });
  return error;
}

describe("Redis failure classes", () => {
  it("a transaction refused because the cluster was down is unavailable", () => {
    const error = replyError("EXECABORT Transaction discarded because of previous errors.", [
      replyError("CLUSTERDOWN The cluster is down"),
      replyError("TRYAGAIN Multiple keys request during rehashing of slot"),
    ]);
    expect(toStoreError(error).code).toBe("store_unavailable");
  });

  it("a transaction refused for a malformed command stays internal", () => {
    const error = replyError("EXECABORT Transaction discarded because of previous errors.", [
      replyError("ERR wrong number of arguments for 'xrange' command"),
    ]);
    expect(toStoreError(error).code).toBe("internal");
  });

  it("a plain CLUSTERDOWN or LOADING reply and a dropped connection are unavailable", () => {
    expect(toStoreError(replyError("CLUSTERDOWN The cluster is down")).code).toBe(
      "store_unavailable",
    );
    expect(toStoreError(replyError("LOADING Redis is loading the dataset")).code).toBe(
      "store_unavailable",
    );
    expect(toStoreError(new Error("Connection is closed.")).code).toBe("store_unavailable");
  });

  it("a WAIT left on a node a failover made a replica is unavailable (the write is unconfirmed)", () => {
    const error = replyError(
      "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.",
    );
    expect(toStoreError(error).code).toBe("store_unavailable");
    expect(toStoreError(replyError("BUSYGROUP Consumer Group name already exists")).code).toBe(
      "internal",
    );
  });
});
