// Scalar and enum conversion shared by every converter. protobuf-es carries 64-bit integers as
// bigint; the domain uses numbers, so every crossing checks the safe-integer range. Enums map
// through explicit tables: UNSPECIFIED and unknown numbers are refused naming the field.
import { invalidArgument } from "../../domain/errors.js";
import type { SessionId } from "../../domain/ids.js";

/** How session ids cross the edge: the server scopes them by tenant, the wire client does not. */
export interface SessionIdMap {
  toStore(clientId: string, field: string): SessionId;
  toClient(storeId: string): string;
}

/** The wire client's view: ids travel as they are; the server validates and scopes them. */
export const PASS_THROUGH_IDS: SessionIdMap = {
  toStore: (clientId) => clientId as SessionId,
  toClient: (storeId) => storeId,
};

export function fromUint64(value: bigint, field: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalidArgument(field, `must be at most ${Number.MAX_SAFE_INTEGER}`);
  }
  return Number(value);
}

export function fromInt64(value: bigint, field: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw invalidArgument(field, "is outside the safe integer range");
  }
  return Number(value);
}

/**
 * A number the wire's uint64 can carry. Negative or fractional values cannot be encoded at all,
 * so the caller gets the same typed refusal a store would give.
 */
export function toUint64(value: number, field: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(field, `must be an integer between 0 and ${Number.MAX_SAFE_INTEGER}`);
  }
  return BigInt(value);
}

export function toUint32(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw invalidArgument(field, "must be an integer between 0 and 4294967295");
  }
  return value;
}

/** A two-way table between proto enum numbers and domain string literals. */
export interface EnumTable<P extends number, D extends string> {
  fromProto(value: P, field: string): D;
  toProto(value: D): P;
}

export function createEnumTable<P extends number, D extends string>(
  pairs: readonly (readonly [P, D])[],
): EnumTable<P, D> {
  const byProto = new Map<number, D>(pairs);
  const byDomain = new Map<string, P>(pairs.map(([p, d]) => [d, p]));
  const names = pairs.map(([, d]) => d).join(", ");
  return {
    fromProto(value, field) {
      const mapped = byProto.get(value);
      if (mapped === undefined) throw invalidArgument(field, `must be one of ${names}`);
      return mapped;
    },
    toProto(value) {
      const mapped = byDomain.get(value);
      // A domain value outside the table is a programming error, not caller input.
      if (mapped === undefined) throw new Error(`no wire value for ${value}`);
      return mapped;
    },
  };
}

/** An absent message field that the call cannot do without. */
export function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw invalidArgument(field, "is required");
  return value;
}

/** Proto3 has no absent strings: the empty string means "not set". */
export function optionalText(value: string): string | undefined {
  return value === "" ? undefined : value;
}
