// Assertions shared by the laws: typed errors, lease outcomes and violation fields.
import { expect } from "vitest";
import { TetherError, type TetherErrorCode } from "../../../src/domain/errors.js";
import type { SessionId } from "../../../src/domain/ids.js";
import type {
  LeaseClaimOutcome,
  LeaseOwner,
  SessionExecutionLease,
} from "../../../src/domain/lease.js";
import type { RuntimeStore } from "../../../src/ports/runtime-store.js";

/**
 * Calls `action`, asserts it rejected with a TetherError of `code`, and returns the error. A
 * store method returns a promise: throwing synchronously instead of rejecting is a defect of its
 * own (callers chaining `.catch` or `Promise.all` would miss the error), so it fails the law.
 */
export async function expectTetherError(
  action: () => Promise<unknown>,
  code: TetherErrorCode,
): Promise<TetherError> {
  let pending: Promise<unknown>;
  try {
    pending = action();
  } catch (thrown) {
    const described = thrown instanceof Error ? thrown.message : String(thrown);
    expect.fail(`expected a ${code} rejection, but the call threw synchronously: ${described}`);
  }
  let caught: unknown = undefined;
  let settled = false;
  try {
    await pending;
    settled = true;
  } catch (error) {
    caught = error;
  }
  expect(settled, `expected a ${code} rejection, but the call succeeded`).toBe(false);
  expect(caught).toBeInstanceOf(TetherError);
  const error = caught as TetherError;
  expect(error.code, error.message).toBe(code);
  return error;
}

export function violationFields(error: TetherError): string[] {
  return error.violations.map((v) => v.field);
}

export function expectAcquired(outcome: LeaseClaimOutcome): SessionExecutionLease {
  if (outcome.kind !== "acquired") {
    throw new Error(
      `expected the lease to be acquired, but ${outcome.holder.owner.ownerId} holds it`,
    );
  }
  return outcome.lease;
}

/** Asserts a busy outcome and returns the reported holder. */
export function expectBusy(outcome: LeaseClaimOutcome): SessionExecutionLease {
  if (outcome.kind !== "busy") {
    throw new Error(
      `expected busy, but the lease was acquired by ${outcome.lease.owner.ownerId} (fencing token ${outcome.lease.fencingToken})`,
    );
  }
  return outcome.holder;
}

export async function acquire(
  store: RuntimeStore,
  session: SessionId,
  owner: LeaseOwner,
  ttlMs: number,
): Promise<SessionExecutionLease> {
  return expectAcquired(await store.tryClaimLease(session, owner, ttlMs));
}

/** The same claim: same holder identity, lease token and generation. */
export function expectSameLease(
  actual: SessionExecutionLease,
  expected: SessionExecutionLease,
): void {
  expect(actual.owner.ownerId).toBe(expected.owner.ownerId);
  expect(actual.owner.incarnationId).toBe(expected.owner.incarnationId);
  expect(actual.leaseToken).toBe(expected.leaseToken);
  expect(actual.fencingToken).toBe(expected.fencingToken);
}
