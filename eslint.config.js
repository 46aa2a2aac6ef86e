// Lint config: type-aware rules for src, test and bench; generated code is excluded.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// The layers of src (CONVENTIONS.md, DESIGN.md §1): the other top-level folders each one may import.
// Anything else that leaves the layer's folder — another layer, src/server, test — is refused.
// src/server is the composition root: nothing lists it, so nothing imports it.
const LAYERS = {
  domain: [],
  ports: ["domain"],
  engine: ["domain", "ports"],
  providers: ["domain", "ports"],
  // MCP servers' tools behind the ToolExecutor port: an adapter, like a provider.
  mcp: ["domain", "ports"],
  store: ["domain", "ports"],
  runtime: ["domain", "ports", "engine"],
  api: ["domain", "ports", "runtime", "gen"],
  server: ["domain", "ports", "runtime", "store", "providers", "mcp", "api"],
};

// Packages that belong to one layer only: Redis to the store, Connect and protobuf to the edge,
// model SDKs to the providers, the MCP SDK to src/mcp; the pure layers take no node built-ins either.
const REDIS = ["ioredis", "redlock"];
const WIRE = ["@connectrpc/*", "@bufbuild/*"];
const SDKS = ["openai", "openai/*", "@anthropic-ai/*"];
const RUNTIME_LIBS = ["pino", "prom-client"];
const MCP = ["@modelcontextprotocol/*"];
const PACKAGES_REFUSED = {
  domain: ["node:*", ...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  ports: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  engine: ["node:*", ...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  providers: [...REDIS, ...WIRE, ...RUNTIME_LIBS, ...MCP],
  mcp: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS],
  store: [...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  runtime: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  api: [...REDIS, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  server: [],
};

/** One block per layer and folder depth: a relative import climbs as many levels as it is deep. */
function layerRules() {
  const blocks = [];
  for (const [layer, allowed] of Object.entries(LAYERS)) {
    for (let depth = 1; depth <= 3; depth += 1) {
      const up = "\\.\\./".repeat(depth);
      const into = allowed.length > 0 ? `(?!(?:${allowed.join("|")})/)` : "";
      blocks.push({
        files: [`src/${layer}/${"*/".repeat(depth - 1)}*.ts`],
        rules: {
          "no-restricted-imports": [
            "error",
            {
              patterns: [
                {
                  regex: `^${up}${into}`,
                  message: `src/${layer} may import only ${allowed.length > 0 ? allowed.map((l) => `src/${l}`).join(", ") : "its own folder"} (CONVENTIONS.md).`,
                },
                ...(PACKAGES_REFUSED[layer].length > 0
                  ? [
                      {
                        group: PACKAGES_REFUSED[layer],
                        message: `a package src/${layer} does not depend on.`,
                      },
                    ]
                  : []),
              ],
            },
          ],
        },
      });
    }
  }
  return blocks;
}

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "src/gen/**",
      "node_modules/**",
      "helm/**",
      "**/*.js",
      ".tmp/**",
      "test/interop/**/gen/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Prettier owns layout; this rule flags the way Prettier breaks long member chains.
      "no-unexpected-multiline": "off",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  ...layerRules(),
  {
    // Errors are mapped once (ADR 0003): only the edge builds a status for the wire.
    files: ["src/**/*.ts"],
    ignores: ["src/api/errors.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='ConnectError']",
          message:
            "Throw a TetherError (or use connectErrorOf from src/api/errors.ts): that file is the one error table.",
        },
      ],
    },
  },
);
