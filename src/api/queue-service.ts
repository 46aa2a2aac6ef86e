// QueueService over a RuntimeStore: queued work and pending turn input of a session, scoped to
// the caller's tenant, listed in pages like every List RPC. Validation of content stays in the store (one rule set for every backend);
// this layer converts, scopes ids and refuses what the wire cannot express.
import { rpcTraceOf } from "./rpc-trace.js";
import type { ServiceImpl } from "@connectrpc/connect";
import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import { invalidArgument, responseTooLarge, sessionNotFound } from "../domain/errors.js";
import type { BatchId, InputId, SessionId } from "../domain/ids.js";
import type { InputCancelSelector } from "../domain/inputs.js";
import {
  ListInputsResponseSchema,
  ListWorkResponseSchema,
  type QueueService,
} from "../gen/tether/v1/queue_service_pb.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type RuntimeStore } from "../ports/runtime-store.js";
import { deliveryFromProto, inputToProto } from "./convert/inputs.js";
import { batchToProto, cancelReportToProto, draftFromProto } from "./convert/queue.js";
import { decodeSequenceToken, encodeSequenceToken } from "./convert/page-token.js";
import { pageSizeOf } from "./page-size.js";
import { optionalText } from "./convert/scalars.js";
import {
  encodedSize,
  fits,
  fittingCount,
  responseBudget,
  type ResponseBudget,
} from "./response-fit.js";
import { scopeOf, type TenantScope } from "./tenancy.js";

export interface QueueServiceOptions {
  store: RuntimeStore;
  /** The largest answer the transport writes (TETHER_MAX_MESSAGE_BYTES); 4 MiB by default. */
  maxResponseBytes?: number;
}

/**
 * One page of a session's batches or inputs, in sequence order after the token's: at most
 * page_size, cut short to fit the response limit; an item too large for any answer is refused.
 */
function pageOf<T extends { seq: number }, D extends DescMessage>(
  items: readonly T[],
  request: { rpc: "ListWork" | "ListInputs"; pageSize: number; pageToken: string },
  answer: { schema: D; build: (page: readonly T[], next: string) => MessageInitShape<D> },
  budget: ResponseBudget,
): MessageInitShape<D> {
  const limit = pageSizeOf(request.rpc, request.pageSize);
  const after = decodeSequenceToken(request.pageToken) ?? 0;
  const rest = items.filter((i) => i.seq > after);
  const build = (n: number) => {
    const page = rest.slice(0, n);
    const more = rest.length > n;
    return answer.build(page, more ? encodeSequenceToken(page.at(-1)?.seq ?? after) : "");
  };
  const wanted = Math.min(limit, rest.length);
  const n = fittingCount(wanted, (k) => fits(answer.schema, build(k), budget));
  if (n === 0 && wanted > 0) {
    const size = encodedSize(answer.schema, build(1), budget.json);
    const remedy = "the next item alone passes it: cancel it, or raise the limit";
    throw responseTooLarge("page_size", size, budget.maxBytes, remedy);
  }
  return build(n);
}

export function createQueueService(options: QueueServiceOptions): ServiceImpl<typeof QueueService> {
  const { store } = options;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_MESSAGE_BYTES;

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
      return pageOf(
        batches.map((b) => ({ seq: b.enqueueSeq, batch: b })),
        { rpc: "ListWork", ...req },
        {
          schema: ListWorkResponseSchema,
          build: (page, nextPageToken) => ({
            batches: page.map((p) => batchToProto(p.batch, scope)),
            nextPageToken,
          }),
        },
        responseBudget(ctx, maxResponseBytes),
      );
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
      // The payload is the client's, returned as written: the trace goes beside it, so the turn
      // that consumes the input hangs under this request (ADR 0013).
      const trace = rpcTraceOf(ctx.values).trace;
      const receipt = await store.submitInput({
        sessionId: scope.toStore(req.sessionId, "session_id"),
        delivery: deliveryFromProto(req.delivery, "delivery"),
        ...(sourceKey === undefined ? {} : { sourceKey }),
        payload: req.payload,
        ...(trace !== undefined && { trace }),
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
      return pageOf(
        inputs,
        { rpc: "ListInputs", ...req },
        {
          schema: ListInputsResponseSchema,
          build: (page, nextPageToken) => ({
            inputs: page.map((i) => inputToProto(i, scope)),
            nextPageToken,
          }),
        },
        responseBudget(ctx, maxResponseBytes),
      );
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
