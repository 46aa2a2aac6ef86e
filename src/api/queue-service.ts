// QueueService over a RuntimeStore: queued work and pending turn input of a session, scoped to
// the caller's tenant. Validation of content stays in the store (one rule set for every backend);
// this layer converts, scopes ids and refuses what the wire cannot express.
import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument, sessionNotFound } from "../domain/errors.js";
import type { BatchId, InputId, SessionId } from "../domain/ids.js";
import type { InputCancelSelector } from "../domain/inputs.js";
import type { QueueService } from "../gen/tether/v1/queue_service_pb.js";
import type { RuntimeStore } from "../ports/runtime-store.js";
import { deliveryFromProto, inputToProto } from "./convert/inputs.js";
import { batchToProto, cancelReportToProto, draftFromProto } from "./convert/queue.js";
import { optionalText } from "./convert/scalars.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export interface QueueServiceOptions {
  store: RuntimeStore;
}

export function createQueueService(options: QueueServiceOptions): ServiceImpl<typeof QueueService> {
  const { store } = options;

  /**
   * Reading or cancelling needs the session to exist for the caller's tenant (ADR 0003); only
   * the RPCs that deliver input create it.
   */
  async function existing(scope: TenantScope, clientId: string): Promise<SessionId> {
    const storeId = scope.toStore(clientId, "session_id");
    if (!(await store.loadSession(storeId))) throw sessionNotFound(clientId);
    return storeId;
  }

  return {
    async enqueueWork(req, ctx) {
      const scope = scopeOf(ctx.values);
      const receipt = await store.enqueueWork(draftFromProto(req.draft, scope, "draft"));
      return { batch: batchToProto(receipt.batch, scope), deduplicated: receipt.deduplicated };
    },

    async listWork(req, ctx) {
      const scope = scopeOf(ctx.values);
      const batches = await store.listWork(await existing(scope, req.sessionId));
      return { batches: batches.map((b) => batchToProto(b, scope)) };
    },

    async cancelWork(req, ctx) {
      const scope = scopeOf(ctx.values);
      const report = await store.cancelWork(
        await existing(scope, req.sessionId),
        req.batchIds as BatchId[],
      );
      return { outcomes: cancelReportToProto(report) };
    },

    async submitInput(req, ctx) {
      const scope = scopeOf(ctx.values);
      const sourceKey = optionalText(req.sourceKey);
      const receipt = await store.submitInput({
        sessionId: scope.toStore(req.sessionId, "session_id"),
        delivery: deliveryFromProto(req.delivery, "delivery"),
        ...(sourceKey === undefined ? {} : { sourceKey }),
        payload: req.payload,
      });
      return {
        input: inputToProto(receipt.input, scope),
        deduplicated: receipt.deduplicated,
        sessionBusy: receipt.sessionBusy,
      };
    },

    async listInputs(req, ctx) {
      const scope = scopeOf(ctx.values);
      const inputs = await store.listInputs(await existing(scope, req.sessionId));
      return { inputs: inputs.map((i) => inputToProto(i, scope)) };
    },

    async cancelInputs(req, ctx) {
      const scope = scopeOf(ctx.values);
      let selector: InputCancelSelector;
      switch (req.selector.case) {
        case "inputIds":
          selector = { kind: "ids", inputIds: req.selector.value.ids as InputId[] };
          break;
        case "fromInputId":
          selector = { kind: "suffix", fromInputId: req.selector.value as InputId };
          break;
        default:
          throw invalidArgument("selector", "must be input_ids or from_input_id");
      }
      const report = await store.cancelInputs(await existing(scope, req.sessionId), selector);
      return { outcomes: cancelReportToProto(report) };
    },
  };
}
