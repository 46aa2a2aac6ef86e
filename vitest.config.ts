// Test projects: unit and conformance need no network; integration and e2e use the servers
// that test/support/global-setup.ts starts on loopback (redis-server, a 3-master cluster).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      {
        extends: true,
        test: { name: "conformance", include: ["test/conformance/**/*.test.ts"] },
      },
      {
        extends: true,
        test: { name: "integration", include: ["test/integration/**/*.test.ts"] },
      },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"] } },
      {
        // The abuse suite: one tenant (or a client without a key) attacks the service while a
        // second tenant's calls must keep being answered. Bounded in count and time, loopback only.
        extends: true,
        test: { name: "abuse", include: ["test/abuse/**/*.test.ts"] },
      },
      {
        // The fault-injection suite: its own Redis servers and replica processes, minutes long.
        extends: true,
        test: {
          name: "faults",
          include: ["test/faults/**/*.test.ts"],
          // Above run.ts's watchdog (21 min), so a slow run ends with its own report.
          testTimeout: 22 * 60_000,
          // After every other project: the suite loads both cores for minutes.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
