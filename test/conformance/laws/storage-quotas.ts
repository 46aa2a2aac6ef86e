// Per-tenant storage limits (ADR 0029): a create past the tenant's limit is refused
// (quota_exhausted) and writes nothing; a delete frees a slot; a retried create of an id that
// already holds one is counted once. Sessions, agents and schedules through the storage-slot
// decorator over the backend's own slots; webhook endpoints and metadata bytes in the store's
// own step. Runs on memory, Redis and Redis Cluster; not on the wire.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import { parseSessionId, type SessionId } from "../../../src/domain/ids.js";
import { DEFAULT_STORAGE_LIMITS, type StorageLimits } from "../../../src/domain/storage-quotas.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";
import type { ScheduleStore } from "../../../src/ports/schedule-store.js";
import type { WebhookStore } from "../../../src/ports/webhook-store.js";
import {
  withScheduleQuotas,
  withStorageQuotas,
} from "../../../src/store/shared/storage-quota-store.js";
import { expectTetherError } from "../support/expectations.js";
import {
  commitDraft,
  inputDraft,
  LONG_TTL_MS,
  opaqueOwner,
  workDraft,
} from "../support/fixtures.js";
import { useStoreHarness, type StoreFactory } from "../support/store-factory.js";

const LIMITS: StorageLimits = {
  ...DEFAULT_STORAGE_LIMITS,
  sessions: 2,
  agents: 1,
  schedules: 1,
  session_metadata_bytes: 100,
  metadata_history_bytes: 250,
};
const freshTenant = (): string => `st${randomUUID().slice(0, 8)}`;
const sessionOf = (tenant: string, name: string): SessionId => parseSessionId(`${tenant}:${name}`);
const agentDraft = (agentId: string) => ({
  agentId,
  displayName: "A",
  definition: `{"model":"m1","systemPrompt":"be brief"}`,
});

export function describeStorageQuotaLaws(factory: StoreFactory): void {
  describe("tenant storage limits", () => {
    const harness = useStoreHarness(factory);
    const quotaOptions = () => {
      const slots = harness().storageQuotas;
      if (!slots) throw new Error("this backend's harness has no storage slots");
      return { slots, limitsOf: () => LIMITS };
    };
    const store = (): RuntimeStore => withStorageQuotas(harness().store, quotaOptions());
    const schedules = (): ScheduleStore => {
      const inner = harness().schedules;
      if (!inner) throw new Error("this backend's harness has no schedule store");
      return withScheduleQuotas(inner, quotaOptions());
    };
    const hooks = (): WebhookStore => {
      const inner = harness().webhooks;
      if (!inner) throw new Error("this backend's harness has no webhook store");
      return inner;
    };

    test("sessions: every way of creating one takes a slot; past the limit it is refused and nothing is written", async () => {
      const tenant = freshTenant();
      const s = store();
      await s.commit(commitDraft(sessionOf(tenant, "a"), 0));
      await s.submitInput(inputDraft(sessionOf(tenant, "b"), "hi"));
      for (const create of [
        () => s.commit(commitDraft(sessionOf(tenant, "c"), 0)),
        () => s.submitInput(inputDraft(sessionOf(tenant, "c"), "hi")),
        () => s.enqueueWork(workDraft(sessionOf(tenant, "c"), "w")),
        ...(s.startTurn
          ? [
              () =>
                s.startTurn?.(inputDraft(sessionOf(tenant, "c"), "hi"), {
                  owner: opaqueOwner("storage"),
                  ttlMs: LONG_TTL_MS,
                  maxInputs: 1,
                }) ?? Promise.resolve(),
            ]
          : []),
        () =>
          s.forkSession({
            sourceId: sessionOf(tenant, "a"),
            atRevision: 1,
            targetId: sessionOf(tenant, "c"),
          }),
      ]) {
        const error = await expectTetherError(create, "quota_exhausted");
        expect(error.fields).toMatchObject({ tenant, limit: "sessions", max: 2 });
      }
      expect(await s.loadSession(sessionOf(tenant, "c"))).toBeUndefined();
      expect(await s.listInputs(sessionOf(tenant, "c"))).toEqual([]);
      expect((await quotaOptions().slots.countStorageSlots(tenant)).sessions).toBe(2);
      // Another tenant is not counted with this one.
      await s.commit(commitDraft(sessionOf(freshTenant(), "c"), 0));
    });

    test("sessions: a session that exists is not counted again (inputs, retries); a delete frees its slot", async () => {
      const tenant = freshTenant();
      const s = store();
      const a = sessionOf(tenant, "a");
      await s.submitInput(inputDraft(a, "one"));
      await s.submitInput(inputDraft(a, "two"));
      await s.enqueueWork(workDraft(a, "w"));
      await expectTetherError(() => s.commit(commitDraft(a, 0)), "head_revision_conflict");
      await s.commit(commitDraft(sessionOf(tenant, "b"), 0));
      expect((await quotaOptions().slots.countStorageSlots(tenant)).sessions).toBe(2);
      await expectTetherError(
        () => s.commit(commitDraft(sessionOf(tenant, "c"), 0)),
        "quota_exhausted",
      );
      expect(await s.deleteSession(a)).toBe(true);
      expect((await quotaOptions().slots.countStorageSlots(tenant)).sessions).toBe(1);
      await s.commit(commitDraft(sessionOf(tenant, "c"), 0));
      expect((await s.loadSession(sessionOf(tenant, "c")))?.headRevision).toBe(1);
    });

    test("sessions: a turn start on a session with a commit takes no slot; once deleted (on any replica) a turn start on it takes one and is refused past the limit", async () => {
      const inner = harness().store;
      if (!inner.startTurn) return;
      const tenant = freshTenant();
      const options = quotaOptions();
      let takes = 0;
      const counted = {
        ...options,
        slots: {
          ...options.slots,
          takeStorageSlot: (...args: Parameters<typeof options.slots.takeStorageSlot>) => {
            takes += 1;
            return options.slots.takeStorageSlot(...args);
          },
        },
      };
      // Two replicas' wrappers over the same store: the delete goes through the other one.
      const s = withStorageQuotas(inner, counted);
      const other = withStorageQuotas(inner, options);
      const a = sessionOf(tenant, "a");
      const claim = { owner: opaqueOwner("storage"), ttlMs: LONG_TTL_MS, maxInputs: 1 };
      await s.commit(commitDraft(a, 0));
      await s.commit(commitDraft(sessionOf(tenant, "b"), 0));
      takes = 0;
      const started = await s.startTurn?.(inputDraft(a, "hi"), claim);
      expect(takes).toBe(0);
      expect(started?.started?.inputs?.inputs).toHaveLength(1);
      expect(await other.deleteSession(a)).toBe(true);
      await s.commit(commitDraft(sessionOf(tenant, "c"), 0));
      takes = 0;
      const error = await expectTetherError(
        () => s.startTurn?.(inputDraft(a, "again"), claim) ?? Promise.resolve(),
        "quota_exhausted",
      );
      expect(error.fields).toMatchObject({ tenant, limit: "sessions", max: 2 });
      expect(takes).toBe(1);
      expect(await s.loadSession(a)).toBeUndefined();
      expect(await s.listInputs(a)).toEqual([]);
      expect((await options.slots.countStorageSlots(tenant)).sessions).toBe(2);
    });

    test("startTurn committedOnly: a session with no commit is left untouched (session_not_found)", async () => {
      const inner = harness().store;
      if (!inner.startTurn) return;
      const id = sessionOf(freshTenant(), "fresh");
      const claim = { owner: opaqueOwner("storage"), ttlMs: LONG_TTL_MS, maxInputs: 1 };
      await expectTetherError(
        () =>
          inner.startTurn?.(inputDraft(id, "hi"), { ...claim, committedOnly: true }) ??
          Promise.resolve(),
        "session_not_found",
      );
      expect(await inner.listInputs(id)).toEqual([]);
      expect(await inner.currentLease(id)).toBeUndefined();
      expect(await inner.readSessionSummaries([id])).toEqual([]);
      await inner.commit(commitDraft(id, 0));
      const receipt = await inner.startTurn(inputDraft(id, "hi"), {
        ...claim,
        committedOnly: true,
      });
      expect(receipt.started?.inputs?.inputs).toHaveLength(1);
    });

    test("agents: past the limit refused and nothing written; a delete frees the slot", async () => {
      const tenant = freshTenant();
      const s = store();
      await s.createAgent(agentDraft(`${tenant}:one`));
      await expectTetherError(
        () => s.createAgent(agentDraft(`${tenant}:one`)),
        "agent_already_exists",
      );
      const error = await expectTetherError(
        () => s.createAgent(agentDraft(`${tenant}:two`)),
        "quota_exhausted",
      );
      expect(error.fields).toMatchObject({ tenant, limit: "agents", max: 1 });
      expect(await s.getAgent(`${tenant}:two`)).toBeUndefined();
      expect(await s.deleteAgent(`${tenant}:one`)).toBe(true);
      expect((await s.createAgent(agentDraft(`${tenant}:two`))).version).toBe(1);
    });

    test("schedules: past the limit refused and nothing written; an idempotent replay is counted once; a delete frees the slot", async () => {
      const tenant = freshTenant();
      const s = schedules();
      const draft = (scheduleId: string) => ({
        tenant,
        scheduleId,
        spec: '{"v":1}',
        nextFireAt: undefined,
      });
      expect((await s.createSchedule(draft("one"))).kind).toBe("created");
      expect((await s.createSchedule(draft("one"))).kind).toBe("existing");
      const error = await expectTetherError(
        () => s.createSchedule(draft("two")),
        "quota_exhausted",
      );
      expect(error.fields).toMatchObject({ tenant, limit: "schedules", max: 1 });
      expect(await s.getSchedule({ tenant, scheduleId: "two" })).toBeUndefined();
      expect(await s.deleteSchedule({ tenant, scheduleId: "one" })).toBe(true);
      expect((await s.createSchedule(draft("two"))).kind).toBe("created");
    });

    test("webhook endpoints: the create past max is refused in its own step and writes nothing; a taken id is not counted; a delete frees", async () => {
      const tenant = freshTenant();
      const h = hooks();
      const draft = (endpointId: string) => ({
        tenant,
        endpointId,
        url: "https://hooks.example.com/tether",
        eventTypes: ["turn.completed" as const],
        secret: "whsec_conformance",
        createdAtMs: 1_700_000_000_000,
      });
      expect(await h.createEndpoint(draft("e1"), 2)).toBeDefined();
      expect(await h.createEndpoint(draft("e2"), 2)).toBeDefined();
      expect(await h.createEndpoint(draft("e2"), 2)).toBeUndefined();
      const error = await expectTetherError(
        () => h.createEndpoint(draft("e3"), 2),
        "quota_exhausted",
      );
      expect(error.fields).toMatchObject({ tenant, limit: "webhook_endpoints", max: 2 });
      expect((await h.listEndpoints(tenant)).map((e) => e.endpointId)).toEqual(["e1", "e2"]);
      expect(await h.deleteEndpoint(tenant, "e1")).toBe(true);
      expect(await h.createEndpoint(draft("e3"), 2)).toBeDefined();
    });

    test("metadata: a commit whose metadata would pass session_metadata_bytes is refused and changes nothing", async () => {
      const tenant = freshTenant();
      const s = store();
      const sid = sessionOf(tenant, "m");
      // 1 + 60 bytes, then 1 + 60 more: 122 bytes past the 100 allowed.
      await s.commit(commitDraft(sid, 0, { metadataPatch: { a: "x".repeat(60) } }));
      const error = await expectTetherError(
        () => s.commit(commitDraft(sid, 1, { metadataPatch: { b: "y".repeat(60) } })),
        "quota_exhausted",
      );
      expect(error.fields).toMatchObject({ tenant, limit: "session_metadata_bytes", max: 100 });
      const after = await s.loadSession(sid);
      expect(after?.headRevision).toBe(1);
      expect(after?.metadata).toEqual({ a: "x".repeat(60) });
      // Replacing or removing a key counts what remains, not what was there.
      await s.commit(commitDraft(sid, 1, { metadataPatch: { a: "z".repeat(90) } }));
      await s.commit(commitDraft(sid, 2, { metadataPatch: { a: "", b: "y".repeat(60) } }));
      expect((await s.loadSession(sid))?.metadata).toEqual({ b: "y".repeat(60) });
    });

    test("metadata history: patches past metadata_history_bytes are refused and change nothing; older revisions stay readable", async () => {
      const tenant = freshTenant();
      const s = store();
      const sid = sessionOf(tenant, "h");
      // Each patch is 1 + 80 bytes: three fit in 250, a fourth does not.
      await s.commit(commitDraft(sid, 0, { metadataPatch: { k: "1".repeat(80) } }));
      await s.commit(commitDraft(sid, 1, { metadataPatch: { k: "2".repeat(80) } }));
      await s.commit(commitDraft(sid, 2, { metadataPatch: { k: "3".repeat(80) } }));
      const error = await expectTetherError(
        () => s.commit(commitDraft(sid, 3, { metadataPatch: { k: "4".repeat(80) } })),
        "quota_exhausted",
      );
      expect(error.fields).toMatchObject({ tenant, limit: "metadata_history_bytes", max: 250 });
      expect((await s.loadSession(sid))?.headRevision).toBe(3);
      expect((await s.readRevision(sid, 1)).metadata).toEqual({ k: "1".repeat(80) });
      // A commit without a metadata patch still applies.
      expect((await s.commit(commitDraft(sid, 3, { appendMessages: ["m"] }))).headRevision).toBe(4);
    });
  });
}
