// The conversation as the provider receives it: an optional system prompt first, then, when the
// transcript holds a compaction, its summary in place of the messages it covers (cleared tool
// results as a placeholder), and image input replaced by a short note for providers that cannot
// read images. The whole transcript is kept beside it: a compaction indexes into it. A native
// compaction (ADR 0019) is sent as the item itself, for the adapter to render as its own block.
import { CLEARED_TOOL_RESULT, summaryMessage } from "../domain/compaction.js";
import type { CompactionItem, InputItem, Message } from "../domain/conversation.js";
import type {
  ModelCallOptions,
  ModelCapabilities,
  ModelProvider,
} from "../ports/model-provider.js";

/** The provider and model a turn calls: a native compaction item is sent only to them. */
export interface NativeTarget {
  provider: string;
  model: string;
}

/** Where a turn's calls go, for providers that have their own compaction. */
export function nativeTarget(
  provider: ModelProvider,
  model: ModelCallOptions,
): NativeTarget | undefined {
  const native = provider.nativeCompaction;
  return native && { provider: provider.name, model: native.modelOf(model) };
}

/** Whether `item` carries native state this provider and model accept. */
export function nativeMatches(item: CompactionItem, target: NativeTarget | undefined): boolean {
  return (
    item.native !== undefined &&
    target !== undefined &&
    item.provider === target.provider &&
    item.model === target.model
  );
}

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
    private readonly target?: NativeTarget,
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
    // The provider's own state goes back to the provider and model that made it (the adapter
    // renders it); any other is sent the summary's text.
    if (latest !== undefined && nativeMatches(latest, this.target)) view.push(latest);
    else if (latest !== undefined && latest.summary !== "") {
      view.push(summaryMessage(latest.summary));
    }
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
