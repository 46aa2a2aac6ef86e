// MCP servers behind the hub, against real servers the test starts: the reference "everything"
// server over stdio and over Streamable HTTP, and the project's own misbehaving server
// (test/support/mcp-test-server.ts) over stdio. Connection, tool lists, calls, results,
// cancellation, timeouts, a server that dies mid-call or is down, and health.
import { afterEach, describe, expect, it } from "vitest";
import { createHealthState, ServingStatus } from "../../../src/api/health-service.js";
import type { McpServerConfig } from "../../../src/mcp/config.js";
import { createMcpHub, IDEMPOTENCY_META_KEY, type McpHub } from "../../../src/mcp/hub.js";
import { watchMcpHealth } from "../../../src/server/mcp-health.js";
import {
  everythingStdio,
  quietMcpLogger,
  startEverythingHttp,
  testServer,
} from "../../support/mcp-servers.js";
import { freePort } from "../../support/redis-harness.js";
import { waitFor } from "../../support/wait-for.js";

const connected = (hub: McpHub, name: string) => () =>
  hub.states().some((s) => s.name === name && s.state === "connected");

const call = (name: string, args: object = {}, callId = "call-1") => ({
  callId,
  toolName: name,
  arguments: args as never,
  argumentsJson: JSON.stringify(args),
});
const context = () => ({ signal: new AbortController().signal, turnId: "turn-1" });

describe("MCP hub", () => {
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  const hubOf = (servers: McpServerConfig[], callTimeoutMs = 10_000) => {
    const hub = createMcpHub({ servers, callTimeoutMs, logger: quietMcpLogger, maxBackoffMs: 500 });
    cleanup.push(() => hub.close());
    return hub;
  };

  it("lists the everything server's tools over stdio and calls one with the turn's key", async () => {
    const hub = hubOf([everythingStdio()]);
    await waitFor(connected(hub, "everything"), { what: "everything connected" });
    const turn = hub.forTurn(["everything"], (id) => `s/t/${id}`);
    const names = turn.executor.definitions().map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(["everything__echo", "everything__get-sum"]));
    expect(turn.unavailable).toEqual([]);
    const echoed = await turn.executor.execute(
      call("everything__echo", { message: "hi" }),
      context(),
    );
    expect(echoed).toEqual({ output: "Echo: hi", isError: false });
    // One tool by name; no selection offers nothing.
    const one = hub.forTurn(["everything__echo"], (id) => id);
    expect(one.executor.definitions().map((d) => d.name)).toEqual(["everything__echo"]);
    expect(hub.forTurn([], (id) => id).executor.definitions()).toEqual([]);
    expect(hub.serverOf("everything__anything")).toBe("everything");
    expect(hub.serverOf("other__echo")).toBeUndefined();
  });

  it("works over Streamable HTTP, and picks a restarted server's tools up again", async () => {
    const port = await freePort();
    let http = await startEverythingHttp(port);
    cleanup.push(() => http.child.kill("SIGKILL"));
    const hub = hubOf([
      {
        name: "web",
        transport: { kind: "http", url: `http://127.0.0.1:${port}/mcp`, headers: { "x-t": "1" } },
        timeoutMs: undefined,
      },
    ]);
    await waitFor(connected(hub, "web"), { what: "web connected" });
    const sum = await hub
      .forTurn(["web"], (id) => id)
      .executor.execute(call("web__get-sum", { a: 2, b: 3 }), context());
    expect(String(sum.output)).toContain("5");
    // The server dies in the middle of a long call: the call fails within a few seconds.
    const postsBefore = http.postsReceived();
    const long = hub
      .forTurn(["web"], (id) => id)
      .executor.execute(
        call("web__trigger-long-running-operation", { duration: 30, steps: 30 }),
        context(),
      );
    const failed = long.then(
      () => "answered",
      () => "failed",
    );
    await waitFor(() => http.postsReceived() > postsBefore, { what: "the long call to arrive" });
    const killedAt = Date.now();
    http.child.kill("SIGKILL");
    expect(await failed).toBe("failed");
    expect(Date.now() - killedAt).toBeLessThan(8_000);
    await waitFor(() => !connected(hub, "web")(), { what: "web down" });
    expect(hub.forTurn(["web"], (id) => id).unavailable).toEqual(["web"]);
    http = await startEverythingHttp(port);
    await waitFor(connected(hub, "web"), { what: "web back" });
    expect(hub.forTurn(["web"], (id) => id).executor.definitions().length).toBeGreaterThan(0);
  }, 60_000);

  it("error results, _meta, cancellation and the per-server timeout", async () => {
    const hub = hubOf([testServer(), testServer("slow", 300)]);
    await waitFor(connected(hub, "test"), { what: "test connected" });
    await waitFor(connected(hub, "slow"), { what: "slow connected" });
    const tools = hub.forTurn(["test", "slow__hang"], (id) => `session-a/turn-b/${id}`).executor;
    expect(await tools.execute(call("test__fail"), context())).toEqual({
      output: "it went wrong on purpose",
      isError: true,
    });
    const meta = await tools.execute(call("test__meta", {}, "call-7"), context());
    expect(JSON.parse(String(meta.output))).toMatchObject({
      [IDEMPOTENCY_META_KEY]: "session-a/turn-b/call-7",
    });
    // Cancellation reaches the server as notifications/cancelled.
    const ask = async (tool: string) => String((await tools.execute(call(tool), context())).output);
    const abort = new AbortController();
    const hung = tools.execute(call("test__hang"), { signal: abort.signal, turnId: "t" });
    await waitFor(async () => (await ask("test__hanging")) === "1", { what: "the call to hang" });
    abort.abort(new Error("turn cancelled"));
    await expect(hung).rejects.toThrow();
    await waitFor(async () => (await ask("test__hanging")) === "0", { what: "the cancellation" });
    expect(await ask("test__cancellations")).toBe("1");
    // The slow server's 300 ms timeout ends a hung call.
    const started = Date.now();
    await expect(tools.execute(call("slow__hang"), context())).rejects.toThrow(/timed out/iu);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);

  it("a stdio server that dies mid-call fails the call at once and is started again", async () => {
    const hub = hubOf([testServer()]);
    await waitFor(connected(hub, "test"), { what: "test connected" });
    const tools = () => hub.forTurn(["test"], (id) => id).executor;
    const started = Date.now();
    await expect(tools().execute(call("test__die"), context())).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
    await waitFor(connected(hub, "test"), { what: "test restarted" });
    expect((await tools().execute(call("test__fail"), context())).isError).toBe(true);
  }, 30_000);

  it("a tool list change is picked up", async () => {
    const hub = hubOf([testServer()]);
    await waitFor(connected(hub, "test"), { what: "test connected" });
    const names = () =>
      hub
        .forTurn(["test"], (id) => id)
        .executor.definitions()
        .map((d) => d.name);
    expect(names()).not.toContain("test__extra1");
    await hub.forTurn(["test"], (id) => id).executor.execute(call("test__grow"), context());
    await waitFor(() => names().includes("test__extra1"), { what: "the new tool" });
  }, 30_000);

  it("a server that is down is reported unavailable and NOT_SERVING; the others serve", async () => {
    const hub = hubOf([
      everythingStdio(),
      {
        name: "broken",
        transport: {
          kind: "stdio",
          command: process.execPath,
          args: ["-e", "process.exit(1)"],
          env: {},
        },
        timeoutMs: undefined,
      },
    ]);
    const health = createHealthState();
    watchMcpHealth(hub, health);
    await waitFor(connected(hub, "everything"), { what: "everything connected" });
    expect(health.get("tether.mcp.everything")).toBe(ServingStatus.SERVING);
    expect(health.get("tether.mcp.broken")).toBe(ServingStatus.NOT_SERVING);
    expect(hub.forTurn(["everything", "broken"], (id) => id).unavailable).toEqual(["broken"]);
    // The server as a whole follows its own checks, not the MCP servers.
    health.setAll(ServingStatus.SERVING);
    expect(health.get("")).toBe(ServingStatus.SERVING);
    expect(health.get("tether.mcp.broken")).toBe(ServingStatus.NOT_SERVING);
  }, 30_000);
});
