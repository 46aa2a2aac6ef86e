// The two reads every SessionService RPC shares: a session the caller's tenant has (or not found,
// in the client's own id), and the session as the client sees it (its live lease and parked turn
// read beside it).
import { sessionNotFound } from "../domain/errors.js";
import type { SessionId } from "../domain/ids.js";
import type { SessionSnapshot } from "../domain/session.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { sessionToProto } from "./convert/session.js";
import type { TenantScope } from "./tenancy.js";

export interface SessionReads {
  load(scope: TenantScope, storeId: SessionId): Promise<SessionSnapshot>;
  view(scope: TenantScope, snapshot: SessionSnapshot): Promise<ReturnType<typeof sessionToProto>>;
  /** The answer of an RPC that changed the session: `session` as it is now. */
  answer(
    scope: TenantScope,
    storeId: SessionId,
  ): Promise<{ session: ReturnType<typeof sessionToProto> }>;
}

export function createSessionReads(
  store: Pick<RuntimeStore, "loadSession" | "currentLease" | "readParkedTurn">,
): SessionReads {
  async function load(scope: TenantScope, storeId: SessionId): Promise<SessionSnapshot> {
    const snapshot = await store.loadSession(storeId);
    if (!snapshot) throw sessionNotFound(scope.toClient(storeId));
    return snapshot;
  }

  async function view(scope: TenantScope, snapshot: SessionSnapshot) {
    const [lease, parked] = await Promise.all([
      store.currentLease(snapshot.sessionId),
      store.readParkedTurn(snapshot.sessionId),
    ]);
    return sessionToProto(snapshot, lease, scope, parked);
  }

  return {
    load,
    view,
    answer: async (scope, storeId) => ({ session: await view(scope, await load(scope, storeId)) }),
  };
}
