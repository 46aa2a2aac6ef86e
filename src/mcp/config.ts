// The MCP servers an operator declares (TETHER_MCP_SERVERS, or TETHER_MCP_CONFIG_FILE holding the
// same JSON array), checked once at start: an entry that cannot be used stops Tether before it
// listens, with a message naming the entry (by name, or by index when it has none) and the field.

export type McpTransportConfig =
  /** Streamable HTTP: the server's MCP endpoint and the headers every request carries. */
  | { kind: "http"; url: string; headers: Record<string, string> }
  /** A child process speaking MCP on stdin and stdout; restarted when it exits. */
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string> };

export interface McpServerConfig {
  /** Prefix of its tools' names as the model sees them: `<name>__<tool>`. */
  name: string;
  transport: McpTransportConfig;
  /** Per-call timeout; the global TETHER_MCP_CALL_TIMEOUT_MS when unset. */
  timeoutMs: number | undefined;
}

/** Reads the variable an entry names for a secret (`{"env": "NAME"}`). */
export type EnvLookup = (name: string) => string | undefined;

/** Letters, digits, `_` and `-`, short enough that `<server>__<tool>` fits a provider's 64. */
const SERVER_NAME = /^[A-Za-z0-9-]{1,24}$/u;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Header or environment values: a string, or `{"env": "NAME"}` for a value kept out of the JSON
 * (a secret the deployment puts in that variable; the Helm chart does so from a Secret).
 */
function stringMap(
  entry: string,
  field: string,
  value: unknown,
  lookup: EnvLookup,
): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) throw new Error(`${entry}: ${field} must be an object`);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === "string") {
      out[key] = v;
    } else if (isObject(v) && typeof v.env === "string" && Object.keys(v).length === 1) {
      const resolved = lookup(v.env);
      if (resolved === undefined || resolved === "") {
        throw new Error(`${entry}: ${field}.${key} names ${v.env}, which is not set`);
      }
      out[key] = resolved;
    } else {
      throw new Error(`${entry}: ${field}.${key} must be a string or {"env": "NAME"}`);
    }
  }
  return out;
}

function parseEntry(raw: unknown, index: number, lookup: EnvLookup): McpServerConfig {
  if (!isObject(raw)) throw new Error(`entry ${index}: must be an object`);
  const entry =
    typeof raw.name === "string" && raw.name !== "" ? `entry "${raw.name}"` : `entry ${index}`;
  const known = new Set(["name", "url", "headers", "command", "args", "env", "timeoutMs"]);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new Error(`${entry}: unknown field ${key}`);
  }
  if (typeof raw.name !== "string" || !SERVER_NAME.test(raw.name)) {
    throw new Error(
      `${entry}: name must be 1-24 letters, digits or '-' (tools are named <name>__<tool>)`,
    );
  }
  let timeoutMs: number | undefined;
  if (raw.timeoutMs !== undefined) {
    if (!Number.isSafeInteger(raw.timeoutMs) || (raw.timeoutMs as number) < 1) {
      throw new Error(`${entry}: timeoutMs must be a positive integer`);
    }
    timeoutMs = raw.timeoutMs as number;
  }
  const hasUrl = raw.url !== undefined;
  const hasCommand = raw.command !== undefined;
  if (hasUrl === hasCommand) {
    throw new Error(`${entry}: needs exactly one of url (Streamable HTTP) or command (stdio)`);
  }
  if (hasUrl) {
    if (typeof raw.url !== "string" || !/^https?:\/\/[^\s]+$/u.test(raw.url)) {
      throw new Error(`${entry}: url must be an http:// or https:// URL`);
    }
    if (raw.args !== undefined || raw.env !== undefined) {
      throw new Error(`${entry}: args and env belong to a command, not a url`);
    }
    const headers = stringMap(entry, "headers", raw.headers, lookup);
    return { name: raw.name, transport: { kind: "http", url: raw.url, headers }, timeoutMs };
  }
  if (typeof raw.command !== "string" || raw.command.trim() === "") {
    throw new Error(`${entry}: command must be a non-empty string`);
  }
  if (raw.headers !== undefined) {
    throw new Error(`${entry}: headers belong to a url, not a command`);
  }
  if (
    raw.args !== undefined &&
    !(Array.isArray(raw.args) && raw.args.every((a) => typeof a === "string"))
  ) {
    throw new Error(`${entry}: args must be a list of strings`);
  }
  return {
    name: raw.name,
    transport: {
      kind: "stdio",
      command: raw.command,
      args: (raw.args as string[] | undefined) ?? [],
      env: stringMap(entry, "env", raw.env, lookup),
    },
    timeoutMs,
  };
}

/**
 * The servers of a JSON array; throws an Error naming the entry and the field (the configuration
 * reader adds the variable's name).
 */
export function parseMcpServers(
  json: string,
  lookup: EnvLookup = () => undefined,
): McpServerConfig[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(parsed)) throw new Error("must be a JSON array of servers");
  const servers = parsed.map((raw, i) => parseEntry(raw, i, lookup));
  const seen = new Set<string>();
  for (const server of servers) {
    if (seen.has(server.name)) {
      throw new Error(`entry "${server.name}": name is used by another entry`);
    }
    seen.add(server.name);
  }
  return servers;
}

/** The entry as logs may show it: header and environment values are secrets. */
export function redactedServer(server: McpServerConfig): Json {
  const hide = (m: Record<string, string>) =>
    Object.fromEntries(Object.keys(m).map((k) => [k, "[redacted]"]));
  const t = server.transport;
  return t.kind === "http"
    ? { name: server.name, url: t.url, headers: hide(t.headers) }
    : { name: server.name, command: t.command, args: t.args, env: hide(t.env) };
}
