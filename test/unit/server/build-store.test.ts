// The composition gives the store the limits it is handed (main.ts hands it the ones that follow
// from TETHER_MAX_MESSAGE_BYTES), not the store's defaults.
import { describe, expect, test } from "vitest";
import { parseSessionId } from "../../../src/domain/ids.js";
import { storeLimitsFor } from "../../../src/ports/runtime-store.js";
import { buildStore } from "../../../src/server/build-store.js";
import { createLogger } from "../../../src/server/logger.js";

const MiB = 1024 * 1024;
const logger = createLogger({ level: "silent" });

/** Submits an input whose payload is `bytes` long; resolves with the refused field, if any. */
async function submit(limits: ReturnType<typeof storeLimitsFor> | undefined, bytes: number) {
  const built = await buildStore({ kind: "memory" }, logger, limits);
  try {
    await built.store.submitInput({
      sessionId: parseSessionId("s"),
      delivery: { kind: "next_turn" },
      payload: "x".repeat(bytes),
    });
    return undefined;
  } catch (error) {
    return (error as { violations?: { field: string }[] }).violations?.map((v) => v.field);
  } finally {
    await built.close();
  }
}

describe("buildStore", () => {
  test("a memory store takes the limits for the configured message size", async () => {
    // 10 MiB: past what a 1 KiB message limit lets the store take, within the 4 MiB default's.
    expect(await submit(storeLimitsFor(1024), 10 * MiB)).toEqual(["payload"]);
    expect(await submit(storeLimitsFor(4 * MiB), 10 * MiB)).toBeUndefined();
    expect(await submit(undefined, 10 * MiB)).toBeUndefined();
  });
});
