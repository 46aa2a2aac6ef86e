// Context management (compaction policy) between tether.v1 and the domain: checked once here,
// each refused field named under the caller's prefix.
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  invalidContextManagement,
  validateContextManagement,
  type CompactionItem,
  type CompactionMode,
  type ContextManagement,
} from "../../domain/compaction.js";
import {
  CompactionMode as CompactionModePb,
  type ContextManagement as ContextManagementPb,
  type CompactionPartSchema,
  type ContextManagementSchema,
} from "../../gen/tether/v1/context_pb.js";
import { fromUint64 } from "./scalars.js";

const MODES: Record<CompactionMode, CompactionModePb> = {
  summarize: CompactionModePb.SUMMARIZE,
  native: CompactionModePb.NATIVE,
  auto: CompactionModePb.AUTO,
};

export const compactionModeToProto = (mode: CompactionMode): CompactionModePb => MODES[mode];

function modeFromProto(mode: CompactionModePb, field: string): CompactionMode | undefined {
  switch (mode) {
    case CompactionModePb.UNSPECIFIED:
      return undefined;
    case CompactionModePb.SUMMARIZE:
      return "summarize";
    case CompactionModePb.NATIVE:
      return "native";
    case CompactionModePb.AUTO:
      return "auto";
    default:
      throw invalidContextManagement([{ field, description: `unknown mode ${String(mode)}` }]);
  }
}

/** Only the fields the message sets, so a turn's policy overrides an agent's field by field. */
export function contextManagementFromProto(
  pb: ContextManagementPb,
  prefix: string,
): ContextManagement {
  const cm: ContextManagement = {};
  if (pb.triggerTokens !== undefined) {
    cm.triggerTokens = fromUint64(pb.triggerTokens, `${prefix}.trigger_tokens`);
  }
  if (pb.keepRecentTokens !== undefined) {
    cm.keepRecentTokens = fromUint64(pb.keepRecentTokens, `${prefix}.keep_recent_tokens`);
  }
  if (pb.instructions !== undefined) cm.instructions = pb.instructions;
  if (pb.clearToolResults !== undefined) {
    cm.clearToolResults = {
      keepLast: pb.clearToolResults.keepLast,
      excludeTools: [...pb.clearToolResults.excludeTools],
    };
  }
  const mode = modeFromProto(pb.mode, `${prefix}.mode`);
  if (mode !== undefined) cm.mode = mode;
  const violations = validateContextManagement(cm, prefix);
  if (violations.length > 0) throw invalidContextManagement(violations);
  return cm;
}

export function contextManagementToProto(
  cm: ContextManagement,
): MessageInitShape<typeof ContextManagementSchema> {
  return {
    ...(cm.triggerTokens !== undefined && { triggerTokens: BigInt(cm.triggerTokens) }),
    ...(cm.keepRecentTokens !== undefined && { keepRecentTokens: BigInt(cm.keepRecentTokens) }),
    ...(cm.instructions !== undefined && { instructions: cm.instructions }),
    ...(cm.clearToolResults && { clearToolResults: cm.clearToolResults }),
    ...(cm.mode !== undefined && { mode: MODES[cm.mode] }),
  };
}

/** A compaction item as the wire's CompactionPart. */
export function compactionPartToProto(
  item: CompactionItem,
): MessageInitShape<typeof CompactionPartSchema> {
  return {
    coversThroughMessage: BigInt(item.coversThroughMessage),
    summary: item.summary,
    provider: item.provider,
    model: item.model,
    tokensBefore: BigInt(item.tokensBefore),
    tokensAfter: BigInt(item.tokensAfter),
    clearedToolResults: item.clearedToolResults,
    mode: MODES[item.mode],
  };
}
