// The benchmarks' Redis command counting (bench/support/resp.ts): the byte sequences a client
// such as ioredis sends, and the counts the turn benchmark reports from them.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  createConnectionCounter,
  emptyTally,
  RespCommandReader,
  scriptNamerFromDir,
  type CommandTally,
} from "../../../bench/support/resp.js";

/** A command as RESP: an array of bulk strings. */
function resp(...args: string[]): Buffer {
  const parts = [`*${args.length}\r\n`];
  for (const arg of args) parts.push(`$${Buffer.byteLength(arg)}\r\n${arg}\r\n`);
  return Buffer.from(parts.join(""));
}

const COMMIT_BODY = "return redis.call('GET', KEYS[1]) -- commit";
const COMMIT_SHA = "07081591ae778842c957b6ae3065154037877ba8";
const byBodyTag = (body: string) => (body.endsWith("-- commit") ? "commit" : undefined);

function counter(): { feed(chunk: Buffer): void; tally: CommandTally } {
  const tally = emptyTally();
  const feed = createConnectionCounter(tally, new Map(), byBodyTag);
  return { feed, tally };
}

describe("RESP command counting", () => {
  it("counts a plain command once, by name", () => {
    const { feed, tally } = counter();
    feed(resp("get", "{t:s}:head"));
    expect(tally.commands).toBe(1);
    expect(Object.fromEntries(tally.byName)).toEqual({ GET: 1 });
  });

  it("counts a script call as one command and names EVALSHA by the body EVAL sent", () => {
    const { feed, tally } = counter();
    feed(resp("EVALSHA", COMMIT_SHA, "1", "k", "a1", "a2"));
    feed(resp("EVAL", COMMIT_BODY, "1", "k", "a1", "a2"));
    feed(resp("EVALSHA", COMMIT_SHA, "1", "k", "a1", "a2"));
    // A body that is none of the store's scripts keeps its sha as a name.
    feed(resp("EVAL", "return 2 -- claimLease", "0"));
    feed(resp("EVALSHA", "eb8305f7a4f022a243de3bceed46422afc31b643", "0"));
    expect(tally.commands).toBe(5);
    expect(Object.fromEntries(tally.byName)).toEqual({
      // Before the body was seen the script has no name yet: the sha's first 8 characters.
      "EVALSHA 07081591": 1,
      "EVAL commit": 1,
      "EVALSHA commit": 1,
      "EVAL other eb8305f7": 1,
      "EVALSHA other eb8305f7": 1,
    });
  });

  it("counts each command inside MULTI/EXEC once and the framing not at all", () => {
    const { feed, tally } = counter();
    feed(
      Buffer.concat([
        resp("MULTI"),
        resp("XRANGE", "{t:s}:log", "-", "+"),
        resp("XRANGE", "{t:s}:log", "5-0", "+"),
        resp("GET", "{t:s}:head"),
        resp("EXEC"),
        resp("GET", "{t:s}:head"),
      ]),
    );
    expect(tally.commands).toBe(4);
    expect(tally.multiBlocks).toBe(1);
    expect(Object.fromEntries(tally.byName)).toEqual({
      "XRANGE (in MULTI)": 2,
      "GET (in MULTI)": 1,
      GET: 1,
    });
  });

  it("reassembles a pipeline split across TCP chunks at any byte", () => {
    const pipeline = Buffer.concat([
      resp("SET", "{t:s}:k", "v\r\nwith a CRLF inside"),
      resp("EVALSHA", COMMIT_SHA, "1", "k"),
    ]);
    for (let cut = 1; cut < pipeline.length; cut++) {
      const reader = new RespCommandReader();
      const first = reader.push(pipeline.subarray(0, cut));
      const second = reader.push(pipeline.subarray(cut));
      expect([...first, ...second].map((c) => c.name)).toEqual(["SET", "EVALSHA"]);
      expect(second.at(-1)?.head[0]?.toString()).toBe(COMMIT_SHA);
    }
    // Byte by byte: nothing is reported before a command's last byte arrives.
    const reader = new RespCommandReader();
    const seen: number[] = [];
    for (let i = 0; i < pipeline.length; i++) {
      if (reader.push(pipeline.subarray(i, i + 1)).length > 0) seen.push(i);
    }
    expect(seen).toEqual([
      resp("SET", "{t:s}:k", "v\r\nwith a CRLF inside").length - 1,
      pipeline.length - 1,
    ]);
  });

  it("reads inline commands", () => {
    const { feed, tally } = counter();
    feed(Buffer.from("PING\r\nclient setname x\r\n"));
    expect(Object.fromEntries(tally.byName)).toEqual({ PING: 1, "CLIENT SETNAME": 1 });
  });

  it("names the store's scripts by their Lua file, behind the shared prelude", () => {
    const dir = new URL("../../../src/store/redis/lua/", import.meta.url).pathname;
    const name = scriptNamerFromDir(dir);
    const commitFile = readdirSync(dir).find((f) => f.startsWith("commit-"));
    const file = readFileSync(`${dir}/${commitFile ?? "commit.lua"}`, "utf8");
    expect(name(`local REPLY = {}\n-- prelude\n${file}`)).toBe("commit");
    expect(name("return 1")).toBeUndefined();
  });
});
