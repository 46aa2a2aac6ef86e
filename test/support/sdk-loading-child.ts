// Run in a child process by test/integration/telemetry/sdk-loading.test.ts: a loader hook fails
// the process if any OpenTelemetry SDK or exporter module is resolved (or, with
// FORBIDDEN_MODULES, any module that pattern matches), then the composition root's pieces are
// built as main.ts builds them (config from the environment, store, telemetry, runtime, server)
// and closed again. Exit 0: no such module was loaded.
import { register } from "node:module";

const FORBIDDEN = process.env.FORBIDDEN_MODULES ?? "@opentelemetry/(sdk-|exporter-|context-)";
const HOOK = `
const forbidden = new RegExp(${JSON.stringify(FORBIDDEN)});
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (forbidden.test(resolved.url)) {
    throw new Error("tracing SDK loaded: " + resolved.url);
  }
  return resolved;
}`;
register(`data:text/javascript,${encodeURIComponent(HOOK)}`);

const { loadConfig } = await import("../../src/server/config.js");
const { buildStore } = await import("../../src/server/build-store.js");
const { buildRuntime } = await import("../../src/server/build-runtime.js");
const { createLogger } = await import("../../src/server/logger.js");
const { createTetherServer } = await import("../../src/server/server.js");
const { storeLimitsFor } = await import("../../src/ports/runtime-store.js");
const { startTelemetry } = await import("../../src/telemetry/index.js");

const config = loadConfig({ ...process.env, TETHER_PORT: "0", TETHER_METRICS_PORT: "0" });
const logger = createLogger({ level: "silent" });
const built = await buildStore(config.store, logger, storeLimitsFor(config.maxMessageBytes));
const telemetry = await startTelemetry(config.tracing);
const { runtime, routes, sweeper, scheduler, webhooks } = buildRuntime(
  config,
  built,
  logger,
  undefined,
  telemetry.tracer,
);
const server = await createTetherServer({
  ...{ config, store: built.store, logger, routes },
  ...(telemetry.tracer && { tracer: telemetry.tracer }),
});
// Every loop the runtime starts is stopped, as main.ts stops them: the child then exits by itself.
sweeper.stop();
await scheduler.stop();
await webhooks.deliverer?.stop();
await runtime.drain(100);
await server.close();
await built.close();
await telemetry.shutdown();
process.stdout.write(`tracer: ${telemetry.tracer === undefined ? "none" : "sdk"}\n`);
