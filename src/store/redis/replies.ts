// The one reply table shared by the TypeScript side and the Lua scripts. Every script answers
// `{code, ...data}` with a code from REPLY; scripts.ts prepends this table to each script as the
// Lua table `R`, so both sides read the same numbers.
export const REPLY = {
  OK: 0,
  BUSY: 1,
  LEASE_EXPIRED: 2,
  NOT_HELD: 3,
  NONE: 4,
  DEDUPLICATED: 5,
  SOURCE_KEY_CONFLICT: 6,
  UNKNOWN_IDS: 7,
  STAMP_REPLAYED: 8,
  STAMP_CONFLICT: 9,
  HEAD_CONFLICT: 10,
  QUEUE_CLAIM_SUPERSEDED: 11,
  INPUT_CLAIM_SUPERSEDED: 12,
  PARKED_MISMATCH: 13,
  EXISTS: 14,
  VERSION_CONFLICT: 15,
  OUT_OF_RANGE: 16,
  NOT_KEPT: 17,
  QUOTA_REFUSED: 18,
} as const;

export type ReplyName = keyof typeof REPLY;
export type ReplyCode = (typeof REPLY)[ReplyName];

/** The Lua form of the table: `local R = { OK = 0, ... }`. */
export function luaReplyTable(): string {
  const entries = Object.entries(REPLY).map(([name, code]) => `${name} = ${code}`);
  return `local R = { ${entries.join(", ")} }\n`;
}
