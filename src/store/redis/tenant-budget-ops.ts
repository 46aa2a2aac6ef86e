// Tenant spend of the Redis store (ADR 0016): one hash per tenant in its own slot, one script
// that adds a charge and answers the new total.
import type { TenantCharge } from "../../ports/budget-guard.js";
import { int } from "./codec.js";
import type { RedisContext } from "./context.js";

export async function chargeTenantSpend(ctx: RedisContext, charge: TenantCharge): Promise<number> {
  const reply = await ctx.scripts.run(
    "chargeTenantSpend",
    [ctx.tenantSpendKey(charge.tenant)],
    [charge.window, String(charge.costMicros)],
  );
  return int(reply, 1);
}
