// Provider selection for the composition root: the echo model by default, or a vendor adapter.
import type { ModelProvider } from "../ports/model-provider.js";
import {
  createAnthropicMessagesProvider,
  type AnthropicMessagesProviderOptions,
} from "./anthropic-messages.js";
import { createOpenAIChatProvider, type OpenAIChatProviderOptions } from "./openai-chat.js";
import { createEchoProvider, type EchoProviderOptions } from "./scripted.js";
import { createToolDemoProvider, type ToolDemoProviderOptions } from "./demo-tools.js";

export { createAnthropicMessagesProvider } from "./anthropic-messages.js";
export { createOpenAIChatProvider } from "./openai-chat.js";
export { createEchoProvider, createScriptedProvider } from "./scripted.js";
export { createToolDemoProvider } from "./demo-tools.js";
export type { ScriptedCall, ScriptedProvider, ScriptedProviderOptions } from "./scripted.js";

export type ModelProviderConfig =
  | ({ kind: "echo" } & EchoProviderOptions)
  | ({ kind: "scripted-tools" } & ToolDemoProviderOptions)
  | ({ kind: "openai-chat" } & OpenAIChatProviderOptions)
  | ({ kind: "anthropic-messages" } & AnthropicMessagesProviderOptions);

export function createModelProvider(config: ModelProviderConfig): ModelProvider {
  switch (config.kind) {
    case "echo":
      return createEchoProvider(config);
    case "scripted-tools":
      return createToolDemoProvider(config);
    case "openai-chat":
      return createOpenAIChatProvider(config);
    case "anthropic-messages":
      return createAnthropicMessagesProvider(config);
  }
}
