// The model provider as a tenant's quotas see it (ADR 0015): after each model call its real usage
// is charged to the tenant (held for the turn's commit where it carries it, ADR 0038); before each later call of the turn (the first was admitted with the
// turn) the token limits are checked, and while one is used up the call waits, abortably, until
// its window frees. Accepted work is never refused halfway, whatever the limit's mode.
import type { SessionId } from "../../domain/ids.js";
import { quotaOf, tenantOfSession } from "../../domain/quotas.js";
import { countedTokens, isZeroUsage, type UsageTotals } from "../../domain/usage.js";
import type {
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from "../../ports/model-provider.js";
import type { RuntimeDeps } from "../deps.js";
import { createTurnCharges, type TurnCharges } from "./turn-charges.js";
import { providerExtras } from "../../ports/provider-extras.js";

/** The longest one wait lasts before the limit is read again (a window may free early: a new day). */
const TOKEN_RECHECK_MAX_MS = 5_000;

export function withQuotaCounting(
  deps: RuntimeDeps,
  sessionId: SessionId,
  provider: ModelProvider,
  turnCharges?: TurnCharges,
): ModelProvider {
  const quotas = deps.quotas;
  const tenant = tenantOfSession(sessionId);
  const limits = quotas && quotaOf(quotas.config, tenant);
  if (!quotas || !limits) return provider;
  const charges =
    turnCharges ?? createTurnCharges({ sessionId, quotas: quotas.store, logger: deps.logger });
  let calls = 0;

  async function waitForTokens(signal: AbortSignal): Promise<void> {
    // The last call's tokens, held for the commit (ADR 0038), are counted before they are read.
    await charges.flushTokens();
    for (;;) {
      const check = await quotas!.store.checkTokenQuota(tenant, limits!);
      if (check.kind === "within") return;
      deps.logger.info({ sessionId, tenant, ...check }, "model call waits for the token quota");
      await deps.sleep(Math.min(check.retryAfterMs, TOKEN_RECHECK_MAX_MS), signal);
    }
  }

  async function charge(usage: UsageTotals | undefined): Promise<void> {
    if (usage === undefined || isZeroUsage(usage)) return;
    // Held for the commit where it carries them, else counted now (turn-charges.ts).
    await charges.chargeTokens(countedTokens(usage));
  }

  async function* call(
    request: ModelRequest,
  ): AsyncGenerator<ModelStreamEvent, ModelResponse, undefined> {
    if (calls++ > 0) await waitForTokens(request.signal);
    const inner = provider.call(request);
    let streamed: UsageTotals | undefined;
    let done = false;
    try {
      for (;;) {
        const step = await inner.next();
        if (step.done === true) {
          done = true;
          // As the engine counts a call: the final usage when it says anything, else the stream's.
          await charge(isZeroUsage(step.value.usage) ? streamed : step.value.usage);
          return step.value;
        }
        if (step.value.type === "usage") streamed = step.value.usage;
        yield step.value;
      }
    } finally {
      // Stopped early (aborted, or the engine stopped reading): the adapter closes its call.
      if (!done) await inner.return?.();
    }
  }

  // The provider's own compaction is a model call too: it waits and is charged like one.
  const native = provider.nativeCompaction;
  const nativeCompaction = native && {
    modelOf: native.modelOf,
    async compact(request: Parameters<typeof native.compact>[0]) {
      if (calls++ > 0) await waitForTokens(request.signal);
      const result = await native.compact(request);
      await charge(result.usage);
      return result;
    },
  };
  return {
    name: provider.name,
    capabilities: provider.capabilities,
    ...providerExtras(provider, nativeCompaction),
    call,
  };
}
