// The conversation as the provider receives it: an optional system prompt first, and image input
// replaced by a short note for providers that cannot read images.
import type { InputItem, Message } from "../domain/conversation.js";
import type { ModelCapabilities } from "../ports/model-provider.js";

export class ProviderView {
  readonly messages: Message[] = [];

  constructor(
    private readonly capabilities: ModelCapabilities,
    systemPrompt: string | undefined,
    history: readonly Message[],
  ) {
    if (systemPrompt !== undefined && systemPrompt !== "") {
      this.messages.push({ role: "system", text: systemPrompt });
    }
    for (const m of history) this.append(m);
  }

  append(message: Message): void {
    this.messages.push(this.capabilities.images ? message : withoutImages(message));
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
