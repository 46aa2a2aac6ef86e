// MCP servers for the tests: the reference "everything" server (a dev dependency) over stdio or
// Streamable HTTP, and the project's own test server (mcp-test-server.ts) over stdio.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { McpServerConfig } from "../../src/mcp/config.js";

export const quietMcpLogger = { info: () => undefined, warn: () => undefined };

const require = createRequire(import.meta.url);
const everythingMain = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist/index.js",
);

export const everythingStdio = (name = "everything"): McpServerConfig => ({
  name,
  transport: { kind: "stdio", command: process.execPath, args: [everythingMain, "stdio"], env: {} },
  timeoutMs: undefined,
});

export const testServer = (name = "test", timeoutMs?: number): McpServerConfig => ({
  name,
  transport: {
    kind: "stdio",
    command: process.execPath,
    args: ["--import", "tsx", "test/support/mcp-test-server.ts"],
    env: {},
  },
  timeoutMs,
});

export interface EverythingHttp {
  child: ChildProcess;
  /** MCP POST requests the server has received so far (it logs each one on stdout). */
  postsReceived(): number;
}

/** The everything server on Streamable HTTP, on `port`. */
export async function startEverythingHttp(port: number): Promise<EverythingHttp> {
  const child = spawn(process.execPath, [everythingMain, "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let posts = 0;
  child.stdout?.on("data", (b: Buffer) => {
    posts += b.toString().split("Received MCP POST request").length - 1;
  });
  await new Promise<void>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`no listening line: ${output}`)), 15_000);
    child.stderr?.on("data", (b: Buffer) => {
      output += b.toString();
      if (output.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { child, postsReceived: () => posts };
}
