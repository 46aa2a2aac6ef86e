// The page token every List* RPC hands out: its exact form, and the tokens it refuses.
import { describe, expect, test } from "vitest";
import {
  decodePageToken,
  decodeRevisionToken,
  encodePageToken,
  encodeRevisionToken,
} from "../../../../src/api/convert/page-token.js";
import { expectRefusal } from "./support.js";

describe("page tokens", () => {
  test("a token is base64url of the last id, and reads back to it", () => {
    expect(encodePageToken("b")).toBe("eyJhZnRlciI6ImIifQ");
    expect(decodePageToken("eyJhZnRlciI6ImIifQ")).toBe("b");
    expect(decodePageToken(encodePageToken("tenant:ünïcode/id"))).toBe("tenant:ünïcode/id");
  });

  test("an empty token is the first page", () => {
    expect(decodePageToken("")).toBeUndefined();
  });

  test("anything this server did not issue is refused naming page_token", () => {
    // A raw id, not base64 JSON, an empty id, a number where the id goes.
    for (const token of ["b", "garbage!", "eyJhZnRlciI6IiJ9", "eyJhZnRlciI6N30"]) {
      expectRefusal(() => decodePageToken(token), "page_token");
    }
  });
});

describe("revision page tokens (ListMessages)", () => {
  test("a revision travels as the same opaque token; the last page has none", () => {
    expect(encodeRevisionToken(2)).toBe("eyJhZnRlciI6IjIifQ");
    expect(decodeRevisionToken("eyJhZnRlciI6IjIifQ")).toBe(2);
    expect(encodeRevisionToken(0)).toBe("");
    expect(decodeRevisionToken("")).toBeUndefined();
  });

  test("a token of another list, or of no revision, is refused naming page_token", () => {
    // An id token ("b"), a zero, a leading zero, past the safe integers.
    for (const after of ["b", "0", "07", "9007199254740993"]) {
      expectRefusal(() => decodeRevisionToken(encodePageToken(after)), "page_token");
    }
  });
});
