// Answers held to the server's response limit (TETHER_MAX_MESSAGE_BYTES, the transport's
// writeMaxBytes): a list page is cut to what fits, and what cannot fit at all is refused with a
// typed error naming the field, so no answer is left for the transport to fail mid-call.
import {
  create,
  toBinary,
  toJsonString,
  type DescMessage,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";

/** How a call's answer is measured: in the encoding the transport will write. */
export interface ResponseBudget {
  maxBytes: number;
  json: boolean;
}

export function responseBudget(ctx: HandlerContext, maxBytes: number): ResponseBudget {
  // Connect JSON, gRPC+json and gRPC-Web+json answer in JSON; everything else in binary.
  const type = ctx.requestHeader.get("content-type") ?? "";
  return { maxBytes, json: type.includes("json") };
}

/** The answer's size in bytes as the transport would write it. */
export function encodedSize<D extends DescMessage>(
  schema: D,
  value: MessageInitShape<D>,
  json: boolean,
): number {
  const message = create(schema, value);
  return json
    ? Buffer.byteLength(toJsonString(schema, message), "utf8")
    : toBinary(schema, message).byteLength;
}

export function fits<D extends DescMessage>(
  schema: D,
  value: MessageInitShape<D>,
  budget: ResponseBudget,
): boolean {
  return encodedSize(schema, value, budget.json) <= budget.maxBytes;
}

/**
 * The largest n <= count for which `fitsWith(n)` holds (page sizes only shrink an answer, so the
 * test is monotone): count when the whole page fits, 0 when not even one item does.
 */
export function fittingCount(count: number, fitsWith: (n: number) => boolean): number {
  if (fitsWith(count)) return count;
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fitsWith(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}
