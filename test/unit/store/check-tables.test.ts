// One check table per store port, run by one wrapper (ADR 0034): a refused argument is a
// rejected promise before the backend is called, whatever the backend, and the memory store
// refuses what the Redis store refuses even where its lookup would have answered first.
import { describe, expect, test, vi } from "vitest";
import { invalidArgument, isTetherError } from "../../../src/domain/errors.js";
import { createMemoryScheduleStore } from "../../../src/store/memory/schedule-ops.js";
import { createMemoryStorageQuotaStore } from "../../../src/store/memory/storage-quota-ops.js";
import { nothingToCheck, withChecks, type CheckTable } from "../../../src/store/shared/checked.js";

interface Port {
  read(id: string): Promise<string>;
  close(): Promise<void>;
  optional?(id: string): Promise<string>;
  readonly flag?: boolean;
}

const table: CheckTable<Port> = {
  read: (id) => {
    if (id === "") throw invalidArgument("id", "must be a non-empty string");
  },
  close: nothingToCheck,
  optional: (id) => {
    if (id === "") throw invalidArgument("id", "must be a non-empty string");
  },
};

// @ts-expect-error a table that misses an operation of its port does not type-check
const missing: CheckTable<Port> = { read: nothingToCheck, close: nothingToCheck };
void missing;

async function refusal(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error("the call was not refused");
}

describe("withChecks", () => {
  test("a refused argument rejects the promise (no synchronous throw) and never reaches the backend", async () => {
    const read = vi.fn((id: string) => Promise.resolve(`read ${id}`));
    const port = withChecks(table, { read, close: () => Promise.resolve() });
    let pending: Promise<string> | undefined;
    expect(() => (pending = port.read(""))).not.toThrow();
    const error = await refusal(() => pending as Promise<string>);
    expect(isTetherError(error, "invalid_argument")).toBe(true);
    expect(read).not.toHaveBeenCalled();
    expect(await port.read("a")).toBe("read a");
    expect(read).toHaveBeenCalledTimes(1);
  });

  test("members outside the table pass through, and an operation the backend leaves out stays out", async () => {
    const inner = {
      read: (id: string) => Promise.resolve(id),
      close: () => Promise.resolve(),
      flag: true,
      testHook: () => "hook",
    };
    const port = withChecks<Port, typeof inner>(table, inner);
    expect(port.flag).toBe(true);
    expect(port.testHook()).toBe("hook");
    expect("optional" in port).toBe(false);
  });
});

describe("the memory backends refuse what Redis refuses, before any lookup", () => {
  test("unpauseSchedule of an absent schedule with a bad instant is invalid_argument", async () => {
    const store = createMemoryScheduleStore({ clock: { nowMs: () => 1_000 } });
    const ref = { tenant: "t", scheduleId: "absent" };
    const error = await refusal(() => store.unpauseSchedule(ref, -5));
    expect(isTetherError(error, "invalid_argument")).toBe(true);
  });

  test("completeScheduleFire with an empty claim token is invalid_argument, claimed or not", async () => {
    const store = createMemoryScheduleStore({ clock: { nowMs: () => 1_000 } });
    const completion = {
      ref: { tenant: "t", scheduleId: "absent" },
      claimToken: "",
      scheduledAt: 1_000,
      revision: 1,
      nextFireAt: undefined,
    };
    const error = await refusal(() => store.completeScheduleFire(completion));
    expect(isTetherError(error, "invalid_argument")).toBe(true);
  });

  test("a storage slot's bad tenant is a rejected promise, not a synchronous throw", async () => {
    const slots = createMemoryStorageQuotaStore();
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = slots.takeStorageSlot("{bad}", "sessions", "s", 1))).not.toThrow();
    const error = await refusal(() => pending as Promise<unknown>);
    expect(isTetherError(error, "invalid_argument")).toBe(true);
  });
});
