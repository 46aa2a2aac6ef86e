// A turn's admission against its tenant's quotas (ADR 0015), taken by the driver after the claims
// and before the turn runs: admitted, the turn holds a slot (renewed with the leases, released
// when the turn ends in any way); refused, the turn does not start and its session is looked at
// again when the limit may have freed. Nothing claimed is dropped: the claims stay for the next
// holder, which re-claims them under a higher generation.
import type { SessionId } from "../../domain/ids.js";
import { quotaOf, SLOT_RETRY_MS, tenantOfSession } from "../../domain/quotas.js";
import type { RuntimeDeps } from "../deps.js";
import { createTurnCharges, type TurnCharges } from "./turn-charges.js";

/** What keeps an admitted turn's slot renewed with the leases (the session's lease keeper). */
export interface SlotKeeper {
  keepSlot(tenant: string, holder: string): () => void;
}

export type QuotaAdmission =
  { kind: "admitted"; release(): Promise<void> } | { kind: "wait"; wakeAtMs: number };

const UNLIMITED: QuotaAdmission = { kind: "admitted", release: () => Promise.resolve() };

/** One slot per turn of a session: a retried admission of the same turn finds its own slot. */
export const turnSlotHolder = (sessionId: SessionId, turnId: string): string =>
  `${sessionId}/${turnId}`;

export async function admitToQuota(
  deps: RuntimeDeps,
  keeper: SlotKeeper,
  sessionId: SessionId,
  turnId: string,
  options: { charges?: TurnCharges; admittedSlot?: string | undefined } = {},
): Promise<QuotaAdmission> {
  const { charges, admittedSlot } = options;
  const quotas = deps.quotas;
  const tenant = tenantOfSession(sessionId);
  const limits = quotas && quotaOf(quotas.config, tenant);
  if (!quotas || !limits) return UNLIMITED;
  const holder = turnSlotHolder(sessionId, turnId);
  // The turn start's step admitted this very turn: its slot is held already (ADR 0038). A slot
  // it took for another turn id (a derivation that differs) goes back before the admission.
  if (admittedSlot === holder) return admitted(deps, keeper, sessionId, holder, charges);
  if (admittedSlot !== undefined) {
    await quotas.store.releaseTurnSlot(tenant, admittedSlot).catch(() => undefined);
  }
  const outcome = await quotas.store.admitTurn({
    tenant,
    holder,
    limits,
    slotTtlMs: deps.leaseTtlMs,
  });
  deps.logger.info({ sessionId, tenant, turnId, limits, ...outcome }, "quota admission");
  if (outcome.kind === "refused") {
    deps.metrics?.countQuotaRefusal?.(tenant, outcome.limit, "admission");
    const wait = Math.min(outcome.retryAfterMs, quotas.recheckMs ?? SLOT_RETRY_MS);
    return { kind: "wait", wakeAtMs: deps.clock.nowMs() + wait };
  }
  return admitted(deps, keeper, sessionId, holder, charges);
}

/** An admitted turn: its slot renewed with the leases and released by its charges. */
function admitted(
  deps: RuntimeDeps,
  keeper: SlotKeeper,
  sessionId: SessionId,
  holder: string,
  charges: TurnCharges | undefined,
): QuotaAdmission {
  const tenant = tenantOfSession(sessionId);
  const unkeep = keeper.keepSlot(tenant, holder);
  // The turn's charges release the slot: in its commit's step where the store offers it (ADR 0038).
  const owed =
    charges ?? createTurnCharges({ sessionId, quotas: deps.quotas?.store, logger: deps.logger });
  owed.holdSlot(holder);
  return {
    kind: "admitted",
    release: async () => {
      unkeep();
      await owed.releaseSlot();
    },
  };
}
