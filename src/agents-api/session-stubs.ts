// Stubs that tell the truth (ADR 0037): Tether runs no subagents and keeps no artifacts, so a
// session's lists of them are empty pages and a retrieve of one is not found. The session must
// exist (another tenant's, or none, is 404 like every session read).
import { sessionNotFound, TetherError } from "../domain/errors.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { listPage, pageQueryOf } from "./cursor-page.js";
import type { Call, RouteTable } from "./route-table.js";

const EMPTY_PAGE = listPage([], () => "", false);

export function addSessionStubRoutes(
  routes: RouteTable,
  store: Pick<RuntimeStore, "readSessionSummaries">,
): void {
  const requireSession = async (call: Call) => {
    const clientId = call.params.session_id ?? "";
    const storeId = call.scope.toStore(clientId, "session_id");
    const [found] = await store.readSessionSummaries([storeId]);
    if (!found) throw sessionNotFound(clientId);
  };
  for (const kind of ["subagents", "artifacts"] as const) {
    routes.add("GET", `/v1/agents/sessions/:session_id/${kind}`, async (call) => {
      pageQueryOf(call.query); // a bad limit or order is still a 400
      await requireSession(call);
      return { status: 200, body: EMPTY_PAGE };
    });
    const notFound = async (call: Call) => {
      await requireSession(call);
      const what = kind === "subagents" ? "subagent" : "artifact";
      throw new TetherError(
        "item_not_found",
        `no ${what} ${call.params.item_id ?? ""}: Tether runs no subagents and keeps no artifacts`,
      );
    };
    routes.add("GET", `/v1/agents/sessions/:session_id/${kind}/:item_id`, notFound);
    if (kind === "artifacts") {
      routes.add("DELETE", `/v1/agents/sessions/:session_id/artifacts/:item_id`, notFound);
    }
  }
}
