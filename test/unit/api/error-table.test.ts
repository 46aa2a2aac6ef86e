// ADR 0003's table must list every reason the server can emit, with the status the edge gives it:
// the code's one source of truth (the exhaustive STATUS_OF table) is compared with the document,
// so a reason added without a row, or a row that disagrees with the code, fails here.
import { readFileSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { connectErrorOf, STATUS_OF } from "../../../src/api/errors.js";
import { headRevisionContended } from "../../../src/domain/errors.js";

const ADR = new URL("../../../docs/adr/0003-error-codes.md", import.meta.url);

/** TetherError code -> gRPC code name, read from the ADR's table rows. */
function documentedTable(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(ADR, "utf8").split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    // A row is `| codes | status | why |`: cells[0] and the last are empty.
    if (cells.length < 4 || !/^`[A-Z_]+`$/u.test(cells[2] ?? "")) continue;
    const status = (cells[2] ?? "").slice(1, -1);
    for (const match of (cells[1] ?? "").matchAll(/`([a-z_]+)`/gu))
      rows.set(match[1] ?? "", status);
  }
  return rows;
}

describe("ADR 0003's error table", () => {
  it("lists every TetherError code the edge maps, with the status the edge gives it", () => {
    const documented = documentedTable();
    const emitted = Object.entries(STATUS_OF).map(([code, status]) => [code, Code[status]]);
    // Guards the parser itself: the table has a dozen rows, not none.
    expect(documented.size).toBeGreaterThanOrEqual(10);
    for (const [code, status] of emitted) {
      // Code[...] is CamelCase (FailedPrecondition); the ADR writes FAILED_PRECONDITION.
      const expected = (status ?? "").replace(/([a-z])([A-Z])/gu, "$1_$2").toUpperCase();
      expect(documented.get(code ?? ""), `ADR 0003 row for ${code}`).toBe(expected);
    }
  });

  it("documents no reason the code does not have", () => {
    const codes = new Set(Object.keys(STATUS_OF));
    for (const code of documentedTable().keys()) expect(codes, code).toContain(code);
  });

  it("an update that lost every race for the head is UNAVAILABLE and retryable, not ABORTED", () => {
    const error = headRevisionContended("default:s-1", 32);
    expect(error.classification).toBe("retryable");
    const wire = connectErrorOf(error, "default");
    expect(Code[wire.code]).toBe("Unavailable");
    expect(wire.rawMessage).toBe(
      "session s-1: the update lost the head revision to concurrent commits 32 times in a row and was not applied; retry it",
    );
  });
});
