// The scalar crossings every converter uses: 64-bit integers against JS numbers, uint32, enums
// through their tables, required messages and proto3's empty-string "absent".
import { describe, expect, test } from "vitest";
import {
  createEnumTable,
  fromInt64,
  fromUint64,
  optionalText,
  required,
  toUint32,
  toUint64,
} from "../../../../src/api/convert/scalars.js";
import { expectRefusal, MAX_SAFE, MAX_UINT64 } from "./support.js";

describe("64-bit integers", () => {
  test("uint64 round-trips 0 and the largest safe integer", () => {
    for (const [n, wire] of [
      [0, 0n],
      [1, 1n],
      [MAX_SAFE, 9007199254740991n],
    ] as const) {
      expect(toUint64(n, "f")).toBe(wire);
      expect(fromUint64(wire, "f")).toBe(n);
    }
  });

  test("uint64 past the safe range, max uint64 included, is refused naming the field", () => {
    expectRefusal(
      () => fromUint64(9007199254740992n, "fence.fencing_token"),
      "fence.fencing_token",
    );
    const error = expectRefusal(() => fromUint64(MAX_UINT64, "seq"), "seq");
    expect(error.message).toBe("seq: must be at most 9007199254740991");
  });

  test("a number the wire's uint64 cannot carry is refused naming the field", () => {
    for (const bad of [-1, 0.5, MAX_SAFE + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectRefusal(() => toUint64(bad, "expected_head_revision"), "expected_head_revision");
    }
  });

  test("int64 keeps negative values inside the safe range and refuses the rest", () => {
    expect(fromInt64(-9007199254740991n, "f")).toBe(-MAX_SAFE);
    expect(fromInt64(0n, "f")).toBe(0);
    expect(fromInt64(9007199254740991n, "f")).toBe(MAX_SAFE);
    expectRefusal(() => fromInt64(-9007199254740992n, "expires_at_ms"), "expires_at_ms");
    expectRefusal(() => fromInt64(9223372036854775807n, "expires_at_ms"), "expires_at_ms");
  });
});

describe("uint32", () => {
  test("accepts 0 and 4294967295, refuses what lies outside or between", () => {
    expect(toUint32(0, "n")).toBe(0);
    expect(toUint32(4294967295, "n")).toBe(4294967295);
    for (const bad of [-1, 4294967296, 1.5])
      expectRefusal(() => toUint32(bad, "max_batches"), "max_batches");
  });
});

describe("enum tables", () => {
  const colours = createEnumTable<number, "red" | "blue">([
    [1, "red"],
    [2, "blue"],
  ]);

  test("map both ways", () => {
    expect(colours.fromProto(1, "colour")).toBe("red");
    expect(colours.fromProto(2, "colour")).toBe("blue");
    expect(colours.toProto("red")).toBe(1);
    expect(colours.toProto("blue")).toBe(2);
  });

  test("refuse UNSPECIFIED (0) and numbers from a newer peer, naming the field", () => {
    const error = expectRefusal(() => colours.fromProto(0, "draft.colour"), "draft.colour");
    expect(error.message).toBe("draft.colour: must be one of red, blue");
    expectRefusal(() => colours.fromProto(99, "draft.colour"), "draft.colour");
  });
});

describe("presence", () => {
  test("required refuses an absent message and passes a present one, empty or not", () => {
    expectRefusal(() => required(undefined, "fence"), "fence");
    expect(required({}, "fence")).toEqual({});
  });

  test("optionalText reads the empty string as absent", () => {
    expect(optionalText("")).toBeUndefined();
    expect(optionalText(" ")).toBe(" ");
    expect(optionalText("k")).toBe("k");
  });
});
