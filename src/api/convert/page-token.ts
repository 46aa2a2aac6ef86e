// Page tokens of every List* RPC: opaque to clients (base64url of a small JSON record), carrying
// the last client-visible id of the page; a token this server did not issue is refused naming
// `page_token`, so a client never pages by a raw id or an offset.
import { invalidArgument } from "../../domain/errors.js";

export function encodePageToken(lastId: string): string {
  return Buffer.from(JSON.stringify({ after: lastId }), "utf8").toString("base64url");
}

/** The id a page starts after; undefined for the first page (an empty token). */
export function decodePageToken(token: string): string | undefined {
  if (token === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      "after" in parsed &&
      typeof parsed.after === "string" &&
      parsed.after !== ""
    ) {
      return parsed.after;
    }
  } catch {
    // Falls through to the typed refusal below.
  }
  throw invalidArgument("page_token", "is not a token this server issued");
}

/**
 * A page token over a sequence (revisions for ListMessages, enqueue and submission sequences for
 * ListWork and ListInputs, all from 1): the number a page starts after; 0 is "no more pages".
 */
export const encodeSequenceToken = (sequence: number): string =>
  sequence === 0 ? "" : encodePageToken(String(sequence));

/** The sequence number a page starts after; undefined for the first page (an empty token). */
export function decodeSequenceToken(token: string): number | undefined {
  const after = decodePageToken(token);
  if (after === undefined) return undefined;
  const sequence = /^[1-9][0-9]*$/u.test(after) ? Number(after) : Number.NaN;
  if (!Number.isSafeInteger(sequence)) {
    throw invalidArgument("page_token", "is not a token this server issued");
  }
  return sequence;
}

export const encodeRevisionToken = encodeSequenceToken;
export const decodeRevisionToken = decodeSequenceToken;
