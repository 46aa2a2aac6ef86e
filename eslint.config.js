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
  // Outbound webhook HTTP and DNS behind the WebhookSend port (ADR 0021): an adapter too.
  webhooks: ["domain", "ports"],
  store: ["domain", "ports"],
  runtime: ["domain", "ports", "engine"],
  api: ["domain", "ports", "runtime", "gen"],
  // The OpenAI Agents API over HTTP (ADR 0037): an edge beside src/api, whose error table,
  // tenancy and conversions it reuses; it reaches the wire types only through them.
  "agents-api": ["domain", "ports", "runtime", "api"],
  // The OpenTelemetry SDK behind the Tracer port (ADR 0013): only the composition root uses it.
  telemetry: ["ports"],
  server: [
    "domain",
    "ports",
    "runtime",
    "store",
    "providers",
    "mcp",
    "webhooks",
    "api",
    "agents-api",
    "telemetry",
  ],
};

// Packages that belong to one layer only: Redis to the store, Connect and protobuf to the edge,
// model SDKs to the providers, the MCP SDK to src/mcp; the pure layers take no node built-ins either.
const REDIS = ["ioredis", "redlock"];
const WIRE = ["@connectrpc/*", "@bufbuild/*"];
const SDKS = ["openai", "openai/*", "@anthropic-ai/*"];
const RUNTIME_LIBS = ["pino", "prom-client"];
const MCP = ["@modelcontextprotocol/*"];
// The tracing SDK and API stay in src/telemetry; the other layers see the Tracer port only.
const OTEL = ["@opentelemetry/*"];
// Outbound HTTP, DNS and webhook signing stay in src/webhooks: the runtime sends through its port.
const OUTBOUND = [
  "standardwebhooks",
  "node:http",
  "node:https",
  "node:dns",
  "node:dns/*",
  "node:net",
];
const PACKAGES_REFUSED = {
  domain: ["node:*", ...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  ports: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  engine: ["node:*", ...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  providers: [...REDIS, ...WIRE, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  mcp: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...OTEL],
  webhooks: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  store: [...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  runtime: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL, ...OUTBOUND],
  api: [...REDIS, ...SDKS, ...RUNTIME_LIBS, ...MCP, ...OTEL],
  // Inbound HTTP is its trade (node:http types); outbound calls and DNS are not.
  "agents-api": [
    ...REDIS,
    ...WIRE,
    ...SDKS,
    ...RUNTIME_LIBS,
    ...MCP,
    ...OTEL,
    "standardwebhooks",
    "node:https",
    "node:dns",
    "node:dns/*",
    "node:net",
  ],
  telemetry: [...REDIS, ...WIRE, ...SDKS, ...RUNTIME_LIBS, ...MCP],
  // The composition root may name stable semantic-convention keys; the SDK itself it reaches
  // through src/telemetry/index.ts, which loads it only when tracing is on.
  server: ["@opentelemetry/sdk-*", "@opentelemetry/exporter-*", "@opentelemetry/context-*"],
};

// The rooms of src/runtime (ADR 0012) and the rooms each may import, always through that room's
// index.ts. Rooms reach the runtime's shared deps.ts, never its facade (runtime.ts, index.ts).
// The arrows point one way (background → session → turn → stream, observation, limits), so no
// two rooms import each other.
const RUNTIME_ROOMS = {
  stream: [],
  // Traces and metrics of a turn's calls: wrappers of ports that know no turn.
  observation: [],
  // Quotas (a tenant's rate windows) and budgets (spend caps).
  limits: [],
  turn: ["stream", "observation", "limits"],
  session: ["turn", "stream", "limits"],
  // What runs without a caller: the sweep, schedules, webhook delivery.
  background: ["session", "turn"],
};

/** The import patterns a file of `layer`, `depth` folders below src, is refused. */
function layerPatterns(layer, depth) {
  const allowed = LAYERS[layer];
  const up = "\\.\\./".repeat(depth);
  const into = allowed.length > 0 ? `(?!(?:${allowed.join("|")})/)` : "";
  const patterns = [
    {
      regex: `^${up}${into}`,
      message: `src/${layer} may import only ${allowed.length > 0 ? allowed.map((l) => `src/${l}`).join(", ") : "its own folder"} (CONVENTIONS.md).`,
    },
  ];
  if (allowed.includes("runtime")) {
    patterns.push({
      regex: `^${up}runtime/(?!index\\.js$)`,
      message: "outside src/runtime, import the runtime through src/runtime/index.ts.",
    });
  }
  if (allowed.includes("telemetry")) {
    patterns.push({
      regex: `^${up}telemetry/(?!index\\.js$)`,
      message:
        "outside src/telemetry, import it through src/telemetry/index.ts (it loads the SDK only when tracing is on).",
    });
  }
  if (PACKAGES_REFUSED[layer].length > 0) {
    patterns.push({
      group: PACKAGES_REFUSED[layer],
      message: `a package src/${layer} does not depend on.`,
    });
  }
  return patterns;
}

/** A room's own patterns: other rooms only through their index, and only those it may import. */
function roomPatterns(room) {
  const allowed = RUNTIME_ROOMS[room];
  const into = allowed.map((r) => `${r}/index\\.js$`);
  return [
    {
      regex: `^\\.\\./(?:runtime|index)\\.js$`,
      message: "a runtime room never imports the runtime's facade (runtime.ts, index.ts).",
    },
    {
      regex: `^\\.\\./(?!deps\\.js$)${into.length > 0 ? `(?!(?:${into.join("|")}))` : ""}[^.]`,
      message: `src/runtime/${room} may import only ../deps.js${allowed.length > 0 ? " and the index.ts of " + allowed.map((r) => `src/runtime/${r}`).join(", ") : ""} (ADR 0012).`,
    },
  ];
}

/** One block per layer and folder depth (a relative import climbs as many levels as it is deep), then one per runtime room. */
function layerRules() {
  const restrict = (files, patterns) => ({
    files,
    rules: { "no-restricted-imports": ["error", { patterns }] },
  });
  const blocks = [];
  for (const layer of Object.keys(LAYERS)) {
    for (let depth = 1; depth <= 3; depth += 1) {
      blocks.push(
        restrict([`src/${layer}/${"*/".repeat(depth - 1)}*.ts`], layerPatterns(layer, depth)),
      );
    }
  }
  for (const room of Object.keys(RUNTIME_ROOMS)) {
    blocks.push(
      restrict(
        [`src/runtime/${room}/*.ts`],
        [...layerPatterns("runtime", 2), ...roomPatterns(room)],
      ),
    );
  }
  // The facade reaches into the rooms through their index files too (deps.ts names leaf types only).
  blocks.push({
    ...restrict(
      ["src/runtime/*.ts"],
      [
        ...layerPatterns("runtime", 1),
        {
          regex: `^\\./(?:${Object.keys(RUNTIME_ROOMS).join("|")})/(?!index\\.js$)`,
          message: "the runtime's facade imports a room through its index.ts (ADR 0012).",
        },
      ],
    ),
    ignores: ["src/runtime/deps.ts"],
  });
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
    // The fault suite's history checker judges Tether from the outside (ADR 0018): it reads only
    // recorded histories, never Tether's code, generated types or packages.
    files: ["test/faults/history/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(?!\\./[a-z-]+\\.js$)",
              message: "the history checker imports only its sibling modules (ADR 0018).",
            },
          ],
        },
      ],
    },
  },
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
