// Tenant scoping at the edge: a client's session id becomes the store id once, and the pair the
// runtime takes (store id, the client's own id) comes from that one computation.
import { describe, expect, test } from "vitest";
import { createTenantScope } from "../../../src/api/tenancy.js";
import { expectRefusal } from "./convert/support.js";

describe("tenant scope", () => {
  const scope = createTenantScope("t1");

  test("a session as a request names it: the prefixed store id beside the client's id", () => {
    expect(scope.session("s-1", "session_id")).toEqual({
      sessionId: "t1:s-1",
      publicSessionId: "s-1",
    });
    expect(scope.toClient(scope.session("s-1", "session_id").sessionId)).toBe("s-1");
  });

  test("a bad client id is refused naming the field, as toStore refuses it", () => {
    for (const bad of ["", "a:b", "has space", "x".repeat(129)]) {
      expectRefusal(() => scope.session(bad, "session_id"), "session_id");
      expectRefusal(() => scope.toStore(bad, "new_session_id"), "new_session_id");
    }
  });
});
