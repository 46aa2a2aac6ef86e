// The conversation as the provider receives it: an optional system prompt first, and image input
// replaced by a short note for providers that cannot read images.
import type { InputItem, Message } from "../domain/conversation.js";
import type { ModelCapabilities } from "../ports/model-provider.js";

export interface ProviderView {
  readonly messages: readonly Message[];
  append(message: Message): void;
}

export function createProviderView(
  capabilities: ModelCapabilities,
  systemPrompt: string | undefined,
  history: readonly Message[],
): ProviderView {
  const messages: Message[] = [];
  if (systemPrompt !== undefined && systemPrompt !== "") {
    messages.push({ role: "system", text: systemPrompt });
  }
  const append = (message: Message): void => {
    messages.push(capabilities.images ? message : withoutImages(message));
  };
  for (const m of history) append(m);
  return { messages, append };
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
