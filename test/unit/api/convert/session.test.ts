// Usage, snapshots, sessions, receipts and commits: domain → proto → bytes → proto → domain, with
// the edge values of each field, and what proto3 cannot tell apart (empty vs absent) normalized
// the documented way.
import { create } from "@bufbuild/protobuf";
import { describe, expect, test } from "vitest";
import { PASS_THROUGH_IDS } from "../../../../src/api/convert/scalars.js";
import {
  commitFromProto,
  commitToProto,
  receiptFromProto,
  receiptToProto,
  sessionToProto,
  snapshotFromProto,
  snapshotToProto,
  usageFromProto,
  usageToProto,
} from "../../../../src/api/convert/session.js";
import type { BatchId, ClaimId, InputId, SessionId } from "../../../../src/domain/ids.js";
import type { LeaseOwner } from "../../../../src/domain/lease.js";
import type {
  RuntimeCommit,
  SessionSnapshot,
  UsageTotals,
} from "../../../../src/domain/session.js";
import { CommitRequestSchema } from "../../../../src/gen/tether/v1/lease_service_pb.js";
import { SessionSchema } from "../../../../src/gen/tether/v1/session_service_pb.js";
import {
  CommitReceiptSchema,
  SessionSnapshotSchema,
  UsageSchema,
} from "../../../../src/gen/tether/v1/session_pb.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64, overTheWire, tenant } from "./support.js";

const sid = (id: string) => id as SessionId;
const zeroUsage: UsageTotals = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};
const fullUsage: UsageTotals = {
  inputTokens: MAX_SAFE,
  outputTokens: 1,
  cacheReadTokens: 2,
  cacheWriteTokens: 3,
  reasoningTokens: 4,
};
const owner: LeaseOwner = { ownerId: "o", incarnationId: "i", liveness: { kind: "opaque" } };

describe("Usage", () => {
  test.each([
    ["zero", zeroUsage],
    ["the largest safe count", fullUsage],
  ])("round-trips %s", (_name, usage) => {
    expect(usageFromProto(overTheWire(UsageSchema, usageToProto(usage)), "usage")).toEqual(usage);
  });

  test("absent usage stays absent", () => {
    expect(usageFromProto(undefined, "usage")).toBeUndefined();
  });

  test("each counter past the safe range is refused naming its field", () => {
    const fields = [
      ["inputTokens", "usage.input_tokens"],
      ["outputTokens", "usage.output_tokens"],
      ["cacheReadTokens", "usage.cache_read_tokens"],
      ["cacheWriteTokens", "usage.cache_write_tokens"],
      ["reasoningTokens", "usage.reasoning_tokens"],
    ] as const;
    for (const [key, field] of fields) {
      const pb = create(UsageSchema, { [key]: MAX_UINT64 });
      expectRefusal(() => usageFromProto(pb, "usage"), field);
      expectRefusal(() => usageToProto({ ...zeroUsage, [key]: -1 }), field);
    }
  });
});

describe("SessionSnapshot", () => {
  test("round-trips a full snapshot through the tenant scope", () => {
    const snapshot: SessionSnapshot = {
      sessionId: sid("t1:chat"),
      headRevision: MAX_SAFE,
      turnIndex: 3,
      messages: ['{"role":"user"}', ""],
      messagesFrom: 12,
      transcriptEpoch: "1764800000123456",
      usage: fullUsage,
      metadata: { topic: "x", empty: "" },
    };
    const wire = overTheWire(SessionSnapshotSchema, snapshotToProto(snapshot, tenant));
    expect(wire.sessionId).toBe("chat");
    expect(snapshotFromProto(wire, tenant, "snapshot")).toEqual(snapshot);
  });

  test("round-trips an empty session (revision 0, no messages, no metadata)", () => {
    const empty: SessionSnapshot = {
      sessionId: sid("s"),
      headRevision: 0,
      turnIndex: 0,
      messages: [],
      messagesFrom: 0,
      transcriptEpoch: "",
      usage: zeroUsage,
      metadata: {},
    };
    const wire = overTheWire(SessionSnapshotSchema, snapshotToProto(empty, PASS_THROUGH_IDS));
    expect(snapshotFromProto(wire, PASS_THROUGH_IDS, "snapshot")).toEqual(empty);
  });

  test("absent snapshot stays absent; absent usage reads as zero", () => {
    expect(snapshotFromProto(undefined, PASS_THROUGH_IDS, "snapshot")).toBeUndefined();
    const pb = create(SessionSnapshotSchema, { sessionId: "s", headRevision: 1n });
    expect(snapshotFromProto(pb, PASS_THROUGH_IDS, "snapshot")?.usage).toEqual(zeroUsage);
  });

  test("a head revision past the safe range is refused naming the field", () => {
    const pb = create(SessionSnapshotSchema, { sessionId: "s", headRevision: MAX_UINT64 });
    expectRefusal(
      () => snapshotFromProto(pb, PASS_THROUGH_IDS, "gap.snapshot"),
      "gap.snapshot.head_revision",
    );
  });
});

describe("Session", () => {
  const snapshot: SessionSnapshot = {
    sessionId: sid("t1:chat"),
    headRevision: 2,
    turnIndex: 1,
    messages: ["m"],
    messagesFrom: 0,
    transcriptEpoch: "e",
    usage: fullUsage,
    metadata: { a: "b" },
  };

  test("carries the live lease holder when there is one, and no lease field otherwise", () => {
    const lease = {
      sessionId: sid("t1:chat"),
      owner,
      leaseToken: "tok",
      fencingToken: 5,
      expiresAtMs: 1_000,
    };
    const held = overTheWire(SessionSchema, sessionToProto(snapshot, lease, tenant));
    expect(held.sessionId).toBe("chat");
    expect(held.headRevision).toBe(2n);
    expect(held.turnIndex).toBe(1n);
    expect(held.metadata).toEqual({ a: "b" });
    expect(held.usage?.inputTokens).toBe(9007199254740991n);
    expect(held.lease?.sessionId).toBe("chat");
    expect(held.lease?.fencingToken).toBe(5n);
    expect(held.lease?.expiresAtMs).toBe(1000n);
    const free = overTheWire(SessionSchema, sessionToProto(snapshot, undefined, tenant));
    expect(free.lease).toBeUndefined();
  });
});

describe("CommitReceipt", () => {
  test.each([
    [{ sessionId: sid("t1:s"), headRevision: MAX_SAFE, replayed: true }],
    [{ sessionId: sid("t1:s"), headRevision: 0, replayed: false }],
  ])("round-trips %o", (receipt) => {
    const wire = overTheWire(CommitReceiptSchema, receiptToProto(receipt, tenant));
    expect(receiptFromProto(wire, tenant)).toEqual(receipt);
  });

  test("an absent receipt reads as revision 0 for the empty session id", () => {
    expect(receiptFromProto(undefined, PASS_THROUGH_IDS)).toEqual({
      sessionId: "",
      headRevision: 0,
      replayed: false,
    });
  });
});

describe("Commit", () => {
  const through = (commit: RuntimeCommit) =>
    commitFromProto(
      overTheWire(CommitRequestSchema, create(CommitRequestSchema, commitToProto(commit, tenant))),
      tenant,
    );

  test("round-trips a commit with every optional part", () => {
    const commit: RuntimeCommit = {
      sessionId: sid("t1:s-1"),
      expectedHeadRevision: MAX_SAFE,
      appendMessages: ["one", ""],
      usage: fullUsage,
      advanceTurn: true,
      metadataPatch: { set: "v", remove: "" },
      stamp: { operationId: "op-1", contentHash: "h" },
      releaseLease: { sessionId: sid("t1:s-1"), owner, leaseToken: "tok", fencingToken: 9 },
      completeQueueClaims: [
        {
          claimId: "c-1" as ClaimId,
          sessionId: sid("t1:s-1"),
          fencingToken: 9,
          batchIds: ["b-1", "b-2"] as BatchId[],
        },
      ],
      completeInputClaims: [
        {
          claimId: "c-2" as ClaimId,
          sessionId: sid("t1:s-1"),
          fencingToken: 0,
          inputIds: [] as InputId[],
        },
      ],
    };
    expect(through(commit)).toEqual(commit);
  });

  test("round-trips the smallest commit: revision 0, nothing else", () => {
    const commit: RuntimeCommit = {
      sessionId: sid("t1:s"),
      expectedHeadRevision: 0,
      appendMessages: [],
    };
    expect(through(commit)).toEqual(commit);
  });

  test("parts proto3 cannot tell from absent come back absent", () => {
    const commit: RuntimeCommit = {
      sessionId: sid("t1:s"),
      expectedHeadRevision: 1,
      appendMessages: [],
      advanceTurn: false,
      metadataPatch: {},
      completeQueueClaims: [],
      completeInputClaims: [],
    };
    expect(through(commit)).toEqual({
      sessionId: "t1:s",
      expectedHeadRevision: 1,
      appendMessages: [],
    });
  });

  test("an empty stamp is still a stamp (message presence), and zero usage still usage", () => {
    const commit: RuntimeCommit = {
      sessionId: sid("t1:s"),
      expectedHeadRevision: 1,
      appendMessages: [],
      usage: zeroUsage,
      stamp: { operationId: "", contentHash: "" },
    };
    expect(through(commit)).toEqual(commit);
  });

  test("bad input is refused naming the field", () => {
    const base = { sessionId: "s", expectedHeadRevision: 1n };
    expectRefusal(
      () => commitFromProto(create(CommitRequestSchema, { ...base, sessionId: "" }), tenant),
      "session_id",
    );
    expectRefusal(
      () =>
        commitFromProto(
          create(CommitRequestSchema, { ...base, expectedHeadRevision: MAX_UINT64 }),
          tenant,
        ),
      "expected_head_revision",
    );
    expectRefusal(
      () =>
        commitFromProto(
          create(CommitRequestSchema, { ...base, usage: { outputTokens: MAX_UINT64 } }),
          tenant,
        ),
      "usage.output_tokens",
    );
    expectRefusal(
      () =>
        commitFromProto(
          create(CommitRequestSchema, {
            ...base,
            releaseLease: { sessionId: "s", owner: {}, fencingToken: 1n },
          }),
          tenant,
        ),
      "release_lease.owner.liveness",
    );
    expectRefusal(
      () =>
        commitFromProto(
          create(CommitRequestSchema, {
            ...base,
            completeQueueClaims: [
              { claimId: "c", sessionId: "s", fencingToken: 1n },
              { claimId: "c", sessionId: "s", fencingToken: MAX_UINT64 },
            ],
          }),
          tenant,
        ),
      "complete_queue_claims[1].fencing_token",
    );
    expectRefusal(
      () =>
        commitFromProto(
          create(CommitRequestSchema, {
            ...base,
            completeInputClaims: [{ claimId: "c", sessionId: "x:y", fencingToken: 1n }],
          }),
          tenant,
        ),
      "complete_input_claims[0].session_id",
    );
    expectRefusal(
      () =>
        commitToProto(
          { sessionId: sid("t1:s"), expectedHeadRevision: -1, appendMessages: [] },
          tenant,
        ),
      "expected_head_revision",
    );
  });
});
