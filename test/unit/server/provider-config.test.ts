// The provider's base URL (provider-config.ts): either form a user writes reaches each SDK as it
// wants it.
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../../src/server/config.js";
import { providerBaseUrl } from "../../../src/server/provider-config.js";

describe("provider base URLs: either form works", () => {
  test.each([
    ["openai", "http://localhost:8000", "http://localhost:8000/v1"],
    ["openai", "http://localhost:8000/", "http://localhost:8000/v1"],
    ["openai", "http://localhost:11434/v1/", "http://localhost:11434/v1"],
    ["openai", "https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"],
    ["openai", "http://litellm:4000", "http://litellm:4000/v1"],
    ["openai", "https://api.deepinfra.com/v1/openai", "https://api.deepinfra.com/v1/openai"],
    ["anthropic", "https://api.anthropic.com", "https://api.anthropic.com"],
    ["anthropic", "https://api.anthropic.com/v1", "https://api.anthropic.com"],
    ["anthropic", "http://litellm:4000/v1/", "http://litellm:4000"],
    ["anthropic", "http://gateway/anthropic", "http://gateway/anthropic"],
  ] as const)("%s %s -> %s", (kind, raw, expected) => {
    expect(providerBaseUrl(kind, raw)).toBe(expected);
  });

  test("the configuration applies it", () => {
    const config = loadConfig({
      TETHER_PROVIDER: "anthropic",
      ANTHROPIC_API_KEY: "x",
      TETHER_ANTHROPIC_BASE_URL: "http://proxy:4000/v1",
    });
    expect(config.provider).toMatchObject({ baseUrl: "http://proxy:4000" });
  });
});
