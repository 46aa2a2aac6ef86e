// The turn room: running one turn under a held lease. Execution, checkpoints, parking and the
// resume of a parked turn, approvals, client tools, the response format, the commit, and the
// codecs of what a turn stores. It may import the stream room (to emit events), never the
// session room.
export { executeTurn } from "./turn-execution.js";
export { turnIdOf, type TurnWork } from "./turn-preparation.js";
export { turnIdOfInput } from "./turn-id.js";
export type { TurnEnd, TurnEndKind } from "./turn-end.js";
export { requireAnswerableTurn } from "./answerable-turn.js";
export { PARK_RECHECK_MS, parkedBatch } from "./turn-parking.js";
export { decodeCommitted, decodeMessage, encodeMessage } from "./message-codec.js";
export { encodeInputPayload, decodeInputPayload, type TurnSettings } from "./input-payload.js";
export {
  agentBindingPatch,
  isBoundTo,
  pinnedDefaults,
  readDefinition,
  type AgentPin,
} from "./agent-definition.js";
export {
  checkResponseFormat,
  RESPONSE_FORMAT_NAME,
  type ResponseFormat,
} from "./response-format.js";
export {
  compileUserSchema,
  parseUserSchema,
  USER_SCHEMA_LIMITS,
  type SchemaCheck,
} from "./user-schema.js";
export {
  createTranscriptCache,
  TRANSCRIPT_CACHE_SESSIONS,
  type LoadedTranscript,
  type TranscriptCache,
} from "./transcript-cache.js";
export { compactNow, type CompactNowReceipt } from "./compact-now.js";
