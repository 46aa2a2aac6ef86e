// The model and the server tools a turn may call (ADR 0033's schema): TETHER_PROVIDER with its key,
// base URL and model, and the MCP servers. Values are checked for shape here; the runtime builds
// the provider from them.
import { parseMcpServers, type McpServerConfig } from "../mcp/config.js";
import {
  ConfigError,
  inlineOrFile,
  integer,
  oneOf,
  text,
  variable,
  type ConfigReader,
} from "./config-schema.js";

/** Passed through to the runtime that builds the ModelProvider; validated here only for shape. */
export type ProviderConfig =
  | { kind: "echo" }
  /** The echo model plus a "/tool <name> <json>" command that asks for a client tool. */
  | { kind: "scripted-tools" }
  | {
      kind: "openai" | "anthropic";
      apiKey: string;
      baseUrl: string | undefined;
      model: string | undefined;
    };

function absoluteUrl(raw: string): string {
  if (!URL.canParse(raw)) throw new Error("must be an absolute URL");
  return raw;
}

const baseUrlDoc = (format: string) =>
  `a server that speaks ${format} in place of the vendor's (see Models)`;

export const PROVIDER_VARIABLES = {
  // "scripted" is the Helm chart's name for the same no-network echo model.
  provider: variable(
    "TETHER_PROVIDER",
    "echo",
    oneOf(["echo", "scripted", "scripted-tools", "openai", "anthropic"] as const),
    "the model: `echo`, `scripted-tools`, `openai` or `anthropic` (see Models)",
  ),
  model: variable("TETHER_MODEL", undefined, text, "the model name sent; unset: the adapter's"),
  openaiApiKey: variable("TETHER_OPENAI_API_KEY", undefined, text, "the `openai` provider's key"),
  openaiApiKeyPlain: variable(
    "OPENAI_API_KEY",
    undefined,
    text,
    "read when `TETHER_OPENAI_API_KEY` is unset",
  ),
  openaiBaseUrl: variable(
    "TETHER_OPENAI_BASE_URL",
    undefined,
    absoluteUrl,
    baseUrlDoc("Chat Completions"),
  ),
  anthropicApiKey: variable(
    "TETHER_ANTHROPIC_API_KEY",
    undefined,
    text,
    "the `anthropic` provider's key",
  ),
  anthropicApiKeyPlain: variable(
    "ANTHROPIC_API_KEY",
    undefined,
    text,
    "read when `TETHER_ANTHROPIC_API_KEY` is unset",
  ),
  anthropicBaseUrl: variable(
    "TETHER_ANTHROPIC_BASE_URL",
    undefined,
    absoluteUrl,
    baseUrlDoc("the Messages API"),
  ),
  mcpServers: variable(
    "TETHER_MCP_SERVERS",
    undefined,
    text,
    "MCP servers (a JSON array) whose tools turns may select",
  ),
  mcpConfigFile: variable(
    "TETHER_MCP_CONFIG_FILE",
    undefined,
    text,
    "a file holding the same JSON array, in place of `TETHER_MCP_SERVERS`",
  ),
  mcpCallTimeoutMs: variable(
    "TETHER_MCP_CALL_TIMEOUT_MS",
    "60000",
    integer(1, 24 * 60 * 60 * 1000),
    "per-call timeout of MCP tools (a server's `timeoutMs` overrides it)",
  ),
} as const;

const V = PROVIDER_VARIABLES;

export function loadProviderConfig(read: ConfigReader): ProviderConfig {
  const kind = read.get(V.provider);
  if (kind === "echo" || kind === "scripted") return { kind: "echo" };
  if (kind === "scripted-tools") return { kind };
  const own = kind === "openai" ? V.openaiApiKey : V.anthropicApiKey;
  const plain = kind === "openai" ? V.openaiApiKeyPlain : V.anthropicApiKeyPlain;
  const apiKey = read.get(own) ?? read.get(plain);
  if (apiKey === undefined) {
    throw new ConfigError(own.name, `TETHER_PROVIDER=${kind} needs ${own.name} (or ${plain.name})`);
  }
  const rawBase = read.get(kind === "openai" ? V.openaiBaseUrl : V.anthropicBaseUrl);
  const baseUrl = rawBase === undefined ? undefined : providerBaseUrl(kind, rawBase);
  return { kind, apiKey, baseUrl, model: read.get(V.model) };
}

/**
 * The base URL as each SDK wants it, from either form a user writes. The OpenAI SDK appends
 * `/chat/completions` to a base that carries the API version (`…/v1`); the Anthropic SDK appends
 * `/v1/messages` itself, so a base ending in `/v1` would call `/v1/v1/messages`. A bare host for
 * OpenAI gets `/v1` (vLLM, Ollama, LiteLLM); any other path is kept (DeepInfra's `/v1/openai`).
 */
export function providerBaseUrl(kind: "openai" | "anthropic", raw: string): string {
  const url = new URL(raw);
  const path = url.pathname.replace(/\/+$/u, "");
  if (kind === "openai") url.pathname = path === "" ? "/v1" : path;
  else url.pathname = path.replace(/\/v1$/u, "");
  return url.toString().replace(/\/+$/u, "");
}

/** TETHER_MCP_SERVERS, or the same JSON array in TETHER_MCP_CONFIG_FILE; none by default. */
export function loadMcpServers(read: ConfigReader): McpServerConfig[] {
  const given = inlineOrFile(read, V.mcpServers, V.mcpConfigFile);
  if (given === undefined) return [];
  return read.check(given.name, () => parseMcpServers(given.text, read.named));
}
