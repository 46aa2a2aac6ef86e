// The logger never writes a secret: headers, keys, passwords, and the arguments of a failed Redis
// command (a refused HELLO/AUTH carries the password in them).
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, redactUrl } from "../../../src/server/logger.js";

function capture(): { logger: ReturnType<typeof createLogger>; text: () => string } {
  const sink = new PassThrough();
  let text = "";
  sink.on("data", (b: Buffer) => (text += b.toString()));
  return { logger: createLogger({ level: "info", destination: sink }), text: () => text };
}

/** An error shaped like ioredis's ReplyError for a refused HELLO. */
function refusedHello(password: string): Error {
  const error = new Error("WRONGPASS invalid username-password pair");
  error.name = "ReplyError";
  Object.assign(error, { command: { name: "hello", args: ["3", "AUTH", "default", password] } });
  return error;
}

describe("the logger", () => {
  it("redacts credentials wherever they sit", () => {
    const { logger, text } = capture();
    logger.info(
      {
        headers: { authorization: "Bearer s3cret-1" },
        request: { apiKey: "s3cret-2" },
        config: { store: { password: "s3cret-3" } },
      },
      "request",
    );
    expect(text()).not.toMatch(/s3cret/u);
    expect(text()).toContain("[redacted]");
  });

  it("redacts the arguments of a failed Redis command, also as a cause", () => {
    const { logger, text } = capture();
    logger.warn({ err: refusedHello("s3cret-4") }, "redis connection error");
    logger.warn(
      { error: new Error("store unavailable", { cause: refusedHello("s3cret-5") }) },
      "x",
    );
    expect(text()).not.toMatch(/s3cret/u);
    expect(text()).toContain('"name":"hello"');
  });

  it("writes an error's message and stack under `error` as under `err`", () => {
    const { logger, text } = capture();
    logger.warn({ error: new Error("the store did not answer") }, "session loop failed");
    const record = JSON.parse(text()) as { error: { message: string; stack: string } };
    expect(record.error.message).toBe("the store did not answer");
    expect(record.error.stack).toContain("logger.test.ts");
  });

  it("drops the password from a Redis URL", () => {
    expect(redactUrl("redis://user:s3cret@r:6379/0")).toBe("redis://user:redacted@r:6379/0");
  });
});
