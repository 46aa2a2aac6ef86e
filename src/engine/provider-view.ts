// The conversation as the provider receives it: an optional system prompt first, then, when the
// transcript holds a compaction, its summary in place of the messages it covers (cleared tool
// results as a placeholder), and image input replaced by a short note for providers that cannot
// read images. The whole transcript is kept beside it: a compaction indexes into it.
import { CLEARED_TOOL_RESULT, summaryMessage } from "../domain/compaction.js";
import type { CompactionItem, InputItem, Message } from "../domain/conversation.js";
import type { ModelCapabilities } from "../ports/model-provider.js";

export class ProviderView {
  /** What the next model call is sent; replaced whole when a compaction is appended. */
  messages: Message[] = [];
  /** The session's transcript: history, then what this turn appended. */
  readonly all: Message[] = [];
  private cleared: ReadonlySet<string> = new Set();

  constructor(
    private readonly capabilities: ModelCapabilities,
    private readonly systemPrompt: string | undefined,
    history: readonly Message[],
  ) {
    this.all.push(...history);
    this.rebuild();
  }

  /** The latest compaction of the transcript, if any. */
  latestCompaction(): CompactionItem | undefined {
    for (let i = this.all.length - 1; i >= 0; i--) {
      const m = this.all[i];
      if (m?.role === "compaction") return m;
    }
    return undefined;
  }

  append(message: Message): void {
    this.all.push(message);
    if (message.role === "compaction") this.rebuild();
    else this.messages.push(this.shown(message));
  }

  private rebuild(): void {
    const latest = this.latestCompaction();
    this.cleared = new Set(latest?.clearedToolResults ?? []);
    const view: Message[] = [];
    if (this.systemPrompt !== undefined && this.systemPrompt !== "") {
      view.push({ role: "system", text: this.systemPrompt });
    }
    if (latest !== undefined && latest.summary !== "") view.push(summaryMessage(latest.summary));
    for (let i = latest?.coversThroughMessage ?? 0; i < this.all.length; i++) {
      const m = this.all[i];
      if (m !== undefined && m.role !== "compaction") view.push(this.shown(m));
    }
    this.messages = view;
  }

  private shown(message: Message): Message {
    if (message.role === "tool" && this.cleared.has(message.callId)) {
      return { ...message, content: CLEARED_TOOL_RESULT };
    }
    return this.capabilities.images ? message : withoutImages(message);
  }
}

function withoutImages(message: Message): Message {
  if (message.role !== "user" || !message.content.some((i) => i.type === "image")) return message;
  const content: InputItem[] = message.content.map((item) =>
    item.type === "image"
      ? { type: "text", text: "[image omitted: this model does not accept images]" }
      : item,
  );
  return { role: "user", content };
}
