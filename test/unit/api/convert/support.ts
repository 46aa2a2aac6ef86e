// Shared by the conversion round-trip tests: the wire hop (every message is encoded and decoded
// on the way, as it would be between client and server), the two id maps, and the assertion that
// bad input is refused as INVALID_ARGUMENT naming the field.
import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { expect } from "vitest";
import { toConnectError } from "../../../../src/api/errors.js";
import { createTenantScope } from "../../../../src/api/tenancy.js";
import { TetherError } from "../../../../src/domain/errors.js";

/** The largest value a uint64 field carries, far past what a JS number holds exactly. */
export const MAX_UINT64 = 18446744073709551615n;
/** Number.MAX_SAFE_INTEGER written out: the largest count the domain can hold. */
export const MAX_SAFE = 9007199254740991;

/** The server's id map for tenant "t1": client "s-1" is store "t1:s-1". */
export const tenant = createTenantScope("t1");

export function overTheWire<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
): MessageShape<Desc> {
  return fromBinary(schema, toBinary(schema, message));
}

/** Runs `convert`, which must refuse with INVALID_ARGUMENT naming exactly `field`. */
export function expectRefusal(convert: () => unknown, field: string): TetherError {
  let caught: unknown;
  try {
    convert();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a refusal").toBeInstanceOf(TetherError);
  const error = caught as TetherError;
  expect(error.code).toBe("invalid_argument");
  expect(error.violations.map((v) => v.field)).toEqual([field]);
  expect(toConnectError(error, { error: () => undefined }).code).toBe(Code.InvalidArgument);
  return error;
}
