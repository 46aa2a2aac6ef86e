// Storage limits in TETHER_QUOTAS (ADR 0029): set per tenant or in `default` beside the turn
// quotas; every limit left out keeps its built-in default; a storage limit is never `queue`.
import { describe, expect, test } from "vitest";
import { storageLimitsOf } from "../../../src/domain/storage-quotas.js";
import { ConfigError, loadConfig } from "../../../src/server/config.js";

const quotas = (json: unknown) => loadConfig({ TETHER_QUOTAS: JSON.stringify(json) }).quotas;

describe("storage limit configuration", () => {
  test("without any, every tenant has the built-in defaults", () => {
    expect(storageLimitsOf(loadConfig({}).quotas.storage, "acme")).toEqual({
      sessions: 10_000,
      agents: 1_000,
      schedules: 1_000,
      webhook_endpoints: 20,
      session_metadata_bytes: 1_048_576,
      metadata_history_bytes: 8_388_608,
    });
  });

  test("a tenant's own limits, else the default entry's, each absent one the built-in default", () => {
    const config = quotas({
      default: { sessions: 50, concurrent_turns: 2 },
      tenants: {
        acme: { webhook_endpoints: { max: 3, mode: "reject" }, turns_per_minute: 9 },
        globex: { concurrent_turns: 1 },
      },
    });
    expect(storageLimitsOf(config.storage, "acme")).toMatchObject({
      sessions: 10_000,
      webhook_endpoints: 3,
    });
    expect(storageLimitsOf(config.storage, "globex")).toMatchObject({ sessions: 50 });
    expect(storageLimitsOf(config.storage, "initech")).toMatchObject({
      sessions: 50,
      webhook_endpoints: 20,
    });
    // The turn quotas are read as before, storage names left out of them.
    expect(config.tenants.acme).toEqual({ turns_per_minute: { max: 9, mode: "reject" } });
    expect(config.default).toEqual({ concurrent_turns: { max: 2, mode: "queue" } });
  });

  test.each([
    [{ tenants: { acme: { sessions: 0 } } }, "tenants.acme.sessions.max: must be an integer"],
    [{ default: { agents: { max: 5, mode: "queue" } } }, 'default.agents.mode: must be "reject"'],
  ])("refuses %j naming the field", (json, message) => {
    let text = "";
    try {
      quotas(json);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      text = error.message;
    }
    expect(text).toContain(message);
  });
});
