// The compaction kill probe's judge on hand-written reads: a session left whole (uncompacted or
// with one complete compaction) passes; a partial item, two items from one kill, a changed or
// lost earlier message and a revision without a message are each caught.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { judge } from "../../faults/compaction-kill.js";
import { CompactionPartSchema } from "../../../src/gen/tether/v1/context_pb.js";
import {
  TranscriptMessage_Role as Role,
  TranscriptMessageSchema,
  type TranscriptMessage,
} from "../../../src/gen/tether/v1/transcript_pb.js";

const say = (role: Role, revision: number, text: string): TranscriptMessage =>
  create(TranscriptMessageSchema, {
    role,
    revision: BigInt(revision),
    turnId: `t${revision}`,
    parts: [{ kind: { case: "text", value: text } }],
  });

const item = (revision: number, fields: Partial<{ summary: string; model: string }> = {}) =>
  create(TranscriptMessageSchema, {
    role: Role.COMPACTION,
    revision: BigInt(revision),
    parts: [
      {
        kind: {
          case: "compaction",
          value: create(CompactionPartSchema, {
            coversThroughMessage: 2n,
            summary: "Summary covering Answer 1 to Answer 2.",
            provider: "openai-chat",
            model: "fake-window",
            tokensBefore: 12_000n,
            tokensAfter: 300n,
            ...fields,
          }),
        },
      },
    ],
  });

const before = {
  head: 3,
  messages: [
    say(Role.USER, 2, "Question 1"),
    say(Role.ASSISTANT, 2, "Answer 1"),
    say(Role.USER, 3, "Question 2"),
    say(Role.ASSISTANT, 3, "Answer 2"),
  ],
};

describe("compaction kill judge", () => {
  it("passes a session the kill left uncompacted", () => {
    expect(judge(before, before)).toEqual({ problems: [], kind: "uncompacted" });
  });

  it("passes one complete compaction committed with its turn", () => {
    const after = {
      head: 4,
      messages: [
        ...before.messages,
        say(Role.USER, 4, "Question 3"),
        item(4),
        say(Role.ASSISTANT, 4, "Answer 3"),
      ],
    };
    expect(judge(before, after)).toEqual({ problems: [], kind: "compacted" });
  });

  it("catches a compaction without its summary or model", () => {
    for (const fields of [{ summary: "" }, { model: "" }]) {
      const after = { head: 4, messages: [...before.messages, item(4, fields)] };
      expect(judge(before, after).problems).toEqual([
        expect.stringMatching(/^compaction item 4 incomplete/u),
      ]);
    }
  });

  it("catches two compactions from one kill", () => {
    const after = { head: 4, messages: [...before.messages, item(4), item(4)] };
    expect(judge(before, after).problems).toEqual(["2 compaction items added by one kill"]);
  });

  it("catches an earlier message changed or lost", () => {
    const changed = {
      head: 3,
      messages: [say(Role.USER, 2, "Question 1"), say(Role.ASSISTANT, 2, "?")],
    };
    expect(judge(before, changed).problems).toEqual([
      "message 1 changed or missing after the kill",
      "message 2 changed or missing after the kill",
      "message 3 changed or missing after the kill",
      "revision 3 of 3 has no message",
    ]);
  });

  it("catches a revision without a message and a head that moved too far", () => {
    const after = { head: 5, messages: [...before.messages, say(Role.USER, 5, "Question 3")] };
    expect(judge(before, after).problems).toEqual([
      "head 5 after the kill, was 3",
      "revision 4 of 5 has no message",
    ]);
  });
});
