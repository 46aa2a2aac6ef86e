// Runs the Helm chart gate (scripts/test-helm.sh) as part of the test command. On a fresh machine
// the script builds helm and the manifest checker from the Go module proxy, hence the long timeout.
import { execFile } from "node:child_process";
import { describe, expect, it } from "vitest";

const TEN_MINUTES = 10 * 60_000;

describe("helm chart", () => {
  it(
    "lints, renders every values file into strictly valid manifests, and refuses bad values",
    async () => {
      const { code, output } = await new Promise<{ code: number | null; output: string }>(
        (resolve) => {
          execFile(
            "bash",
            ["scripts/test-helm.sh"],
            { timeout: TEN_MINUTES - 10_000, maxBuffer: 16 * 1024 * 1024 },
            (error, stdout, stderr) => {
              const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
              resolve({ code, output: `${stdout}\n${stderr}` });
            },
          );
        },
      );
      // The whole transcript on failure: which case broke and why.
      expect(code, output).toBe(0);
      expect(output).toMatch(/^helm: \d+ passed, 0 failed$/m);
      expect(output).toContain("ok    strict decoding refuses a misspelt field");
      expect(output).toContain("ok    bad values refused: negative-replicas");
      expect(output).toContain("ok    all-on-values: rendered manifests decode strictly");
    },
    TEN_MINUTES,
  );
});
