// Committed messages as clients read them: one typed shape for every role (tether.v1
// TranscriptMessage) instead of JSON strings shaped by role.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Message } from "../../domain/conversation.js";
import type { MessagePartSchema } from "../../gen/tether/v1/transcript_pb.js";
import {
  TranscriptMessage_Role as Role,
  TranscriptMessageSchema,
  type TranscriptMessage,
} from "../../gen/tether/v1/transcript_pb.js";
import { decodeCommitted } from "../../runtime/index.js";
import { compactionPartToProto } from "./context.js";

type PartInit = MessageInitShape<typeof MessagePartSchema>["kind"];

function partsOf(message: Message): PartInit[] {
  switch (message.role) {
    case "system":
      return [{ case: "text", value: message.text }];
    case "user":
      return message.content.map((item): PartInit => {
        if (item.type === "text") return { case: "text", value: item.text };
        const image = item.image;
        return image.kind === "url"
          ? { case: "image", value: { url: image.url } }
          : {
              case: "image",
              value: { mimeType: image.mediaType, sizeBytes: BigInt(image.data.length) },
            };
      });
    case "assistant":
      return message.parts.map((part): PartInit => {
        if (part.type === "text") return { case: "text", value: part.text };
        if (part.type === "reasoning") return { case: "reasoning", value: part.text };
        return {
          case: "toolCall",
          value: {
            callId: part.callId,
            name: part.toolName,
            argumentsJson: part.argumentsJson,
          },
        };
      });
    case "tool":
      return [
        {
          case: "toolResult",
          value: {
            callId: message.callId,
            name: message.toolName,
            output: message.content,
            isError: message.isError,
          },
        },
      ];
    case "compaction":
      return [{ case: "compaction", value: compactionPartToProto(message) }];
  }
}

const ROLES = {
  system: Role.SYSTEM,
  user: Role.USER,
  assistant: Role.ASSISTANT,
  tool: Role.TOOL,
  compaction: Role.COMPACTION,
} as const;

const isMessage = (value: { role?: unknown }): value is Message =>
  typeof value.role === "string" && value.role in ROLES;

export function transcriptMessage(stored: string): TranscriptMessage {
  const { message, mark } = decodeCommitted(stored);
  // Workers with their own loop (LeaseService) may commit entries of their own shape: shown as
  // their JSON, with no role.
  if (!isMessage(message)) {
    return create(TranscriptMessageSchema, {
      role: Role.UNSPECIFIED,
      parts: [{ kind: { case: "text", value: stored } }],
      turnId: mark.turnId,
      revision: BigInt(mark.revision),
    });
  }
  return create(TranscriptMessageSchema, {
    role: ROLES[message.role],
    parts: partsOf(message).map((kind) => ({ kind })),
    turnId: mark.turnId,
    revision: BigInt(mark.revision),
  });
}

/**
 * The messages of revisions after `afterRevision`, whole revisions only, about `limit` of them;
 * and the revision to continue after (0 at the end).
 */
export function messagePage(
  stored: readonly string[],
  afterRevision: number,
  limit: number,
): { messages: TranscriptMessage[]; nextAfterRevision: number } {
  const all = stored
    .map(transcriptMessage)
    .filter(
      (m) => Number(m.revision) > afterRevision || (m.revision === 0n && afterRevision === 0),
    );
  const page: TranscriptMessage[] = [];
  for (let i = 0; i < all.length;) {
    const revision = all[i]?.revision;
    let end = i;
    while (end < all.length && all[end]?.revision === revision) end++;
    if (page.length > 0 && page.length + (end - i) > limit) {
      return { messages: page, nextAfterRevision: Number(page.at(-1)?.revision ?? 0n) };
    }
    page.push(...all.slice(i, end));
    i = end;
  }
  return { messages: page, nextAfterRevision: 0 };
}
