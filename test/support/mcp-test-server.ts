// A small MCP server of the project's own for the MCP tests, on stdio, written with the SDK. Its
// tools misbehave on request: `fail` answers with an error result, `hang` never answers (and
// counts the cancellations it receives), `die` exits the process mid-call, `grow` adds a tool and
// announces the new list, `meta` returns the `_meta` the call carried, `cancellations` reports
// how many hung calls were cancelled and `hanging` how many wait now. Run: node --import tsx
// test/support/mcp-test-server.ts
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "tether-test", version: "1" });
let cancelled = 0;
const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

server.registerTool("fail", { description: "answers with an error result" }, () => ({
  ...text("it went wrong on purpose"),
  isError: true,
}));

let hanging = 0;
server.registerTool("hang", { description: "never answers" }, (extra) => {
  hanging++;
  return new Promise((resolve) => {
    extra.signal.addEventListener("abort", () => {
      hanging--;
      cancelled++;
      resolve(text("cancelled"));
    });
  });
});

server.registerTool("cancellations", { description: "hung calls cancelled so far" }, () =>
  text(String(cancelled)),
);

server.registerTool("hanging", { description: "hung calls waiting now" }, () =>
  text(String(hanging)),
);

server.registerTool("die", { description: "exits mid-call" }, () => {
  setTimeout(() => process.exit(3), 50);
  return new Promise(() => undefined);
});

server.registerTool("meta", { description: "returns the call's _meta" }, (extra) =>
  text(JSON.stringify(extra._meta ?? {})),
);

let grown = 0;
server.registerTool("grow", { description: "adds a tool" }, () => {
  grown++;
  // registerTool announces the new list (notifications/tools/list_changed) once connected.
  server.registerTool(`extra${grown}`, { description: "added at run time" }, () => text("extra"));
  return text(`added extra${grown}`);
});

await server.connect(new StdioServerTransport());
