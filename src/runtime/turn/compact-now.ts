// CompactSession: compaction on demand, as its own commit. It takes the session's lease under an
// owner of its own (so no turn of this replica re-enters it), refuses while a turn runs or is
// parked, summarizes with the session's model under its agent's policy, and commits the item and
// the summary calls' usage through the head CAS, releasing the lease in the same step.
import { randomUUID } from "node:crypto";
import {
  resolveContextPolicy,
  estimateTextTokens,
  estimateTokens,
} from "../../domain/compaction.js";
import type { CompactionItem } from "../../domain/conversation.js";
import { sessionNotFound, TetherError, turnInProgress } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";
import { fenceOf, type LeaseFence } from "../../domain/lease.js";
import { addUsage, ZERO_USAGE, type UsageTotals } from "../../domain/usage.js";
import { compact, DEFAULT_RETRY_POLICY, nativeTarget, ProviderView } from "../../engine/index.js";
import type { RuntimeDeps } from "../deps.js";
import { pinnedDefaults } from "./agent-definition.js";
import { encodeCommitted } from "./message-codec.js";
import { entryCursor } from "../stream/index.js";
import type { SessionEvent } from "../../domain/session-events.js";
import { contextCompacted } from "../../domain/turn-events.js";

/** Sizes the summarizer's chunks when the session's policy sets no trigger. */
export const ON_DEMAND_TRIGGER_TOKENS = 32_000;

export interface CompactNowReceipt {
  /** Undefined when there was nothing to compact (the kept tail is the whole transcript). */
  item: CompactionItem | undefined;
  headRevision: number;
  usage: UsageTotals;
}

export async function compactNow(
  deps: RuntimeDeps,
  sessionId: SessionId,
  instructions: string | undefined,
): Promise<CompactNowReceipt> {
  const owner = {
    ...deps.owner,
    ownerId: `${deps.owner.ownerId}/compaction`,
    incarnationId: randomUUID(),
  };
  const claim = await deps.store.tryClaimLease(sessionId, owner, deps.leaseTtlMs);
  if (claim.kind === "busy") throw turnInProgress(sessionId, "running");
  const fence = fenceOf(claim.lease);
  let released = false;
  try {
    if (await deps.store.readParkedTurn(sessionId)) throw turnInProgress(sessionId, "parked");
    const receipt = await summarizeAndCommit(deps, fence, instructions);
    // A committed compaction released the lease once announced.
    released = receipt.item !== undefined;
    return receipt;
  } finally {
    if (!released) await deps.store.releaseLease(fence).catch(() => undefined);
  }
}

async function summarizeAndCommit(
  deps: RuntimeDeps,
  fence: LeaseFence,
  instructions: string | undefined,
): Promise<CompactNowReceipt> {
  const { sessionId } = fence;
  const { snapshot, history } = await deps.transcripts.load(sessionId);
  if (!snapshot) throw sessionNotFound(sessionId);
  const agent = await pinnedDefaults(deps, snapshot.metadata);
  const settings = { ...deps.defaults, ...agent?.settings };
  const policy = resolveContextPolicy({
    triggerTokens: ON_DEMAND_TRIGGER_TOKENS,
    ...settings.contextManagement,
    ...(instructions !== undefined && instructions !== "" && { instructions }),
  });
  const headRevision = snapshot.headRevision;
  if (policy === undefined) return { item: undefined, headRevision, usage: ZERO_USAGE };
  const model = settings.model !== undefined ? { model: settings.model } : {};
  const view = new ProviderView(
    deps.provider.capabilities,
    settings.systemPrompt,
    history,
    nativeTarget(deps.provider, model),
  );
  let usage = ZERO_USAGE;
  const result = await compact(
    {
      provider: deps.provider,
      retry: DEFAULT_RETRY_POLICY,
      random: Math.random,
      sleep: deps.sleep,
      model,
      signal: AbortSignal.timeout(deps.leaseTtlMs),
      emit: () => undefined,
      reportUsage: (u) => {
        usage = addUsage(usage, u);
      },
    },
    {
      policy,
      all: view.all,
      latest: view.latestCompaction(),
      tokensBefore: estimateTokens(view.messages),
      fixedTokens: estimateTextTokens(settings.systemPrompt ?? ""),
      force: true,
    },
  );
  if (result.kind === "failed") throw new TetherError("internal", result.outcome.message);
  if (result.kind === "cancelled") {
    throw new TetherError("internal", "the summary took longer than the session lease");
  }
  if (result.kind === "nothing") return { item: undefined, headRevision, usage };
  // The lease stays held past the commit: the announcement below is appended under its fence.
  const receipt = await deps.store.commit({
    sessionId,
    expectedHeadRevision: headRevision,
    appendMessages: [encodeCommitted(result.item, { turnId: "", revision: headRevision + 1 })],
    usage,
  });
  deps.metrics?.countCompaction?.(result.item.mode);
  await announce(deps, fence, result.item);
  return { item: result.item, headRevision: receipt.headRevision, usage };
}

/**
 * Tells watchers: `context_compacted` on the session log (no turn id: no turn ran), written only
 * while this compaction's lease is live. It follows the commit, so a watcher never hears of a
 * compaction that did not land; a replica that dies between the two leaves the compaction
 * committed and unannounced (ListMessages shows it; ADR 0019).
 */
async function announce(deps: RuntimeDeps, fence: LeaseFence, item: CompactionItem): Promise<void> {
  const event: SessionEvent = contextCompacted(item);
  try {
    const [seq] = await deps.log.append(fence.sessionId, [{ turnId: "", event }], fence);
    if (seq !== undefined) {
      deps.bus.publish({ cursor: entryCursor(seq), sessionId: fence.sessionId, turnId: "", event });
    }
  } catch (error) {
    deps.logger.warn(
      { sessionId: fence.sessionId, err: error },
      "on-demand compaction committed but not announced",
    );
  } finally {
    await deps.store.releaseLease(fence).catch(() => undefined);
  }
}
