// Reads the client side of a Redis connection (RESP arrays of bulk strings, or inline commands)
// and tallies the commands it carries, for the benchmarks' counting proxy. Pure: bytes in, counts
// out, so the rules below are unit-tested without a socket.
//
// Counting rules: every command counts one, a script call (EVALSHA, EVAL) included; MULTI, EXEC
// and DISCARD only frame a transaction and are not counted themselves, so each command queued
// inside a MULTI block counts one. EVALSHA is labelled with the script's name once the proxy has
// seen its body (EVAL or SCRIPT LOAD, which ioredis sends after a NOSCRIPT reply).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** One parsed command: its name (upper case) and its first arguments. */
export interface RespCommand {
  name: string;
  /** Up to the first two arguments (enough for EVALSHA's sha, EVAL's body, a subcommand). */
  head: Buffer[];
}

const CRLF = 0x0d;
const ARGS_KEPT = 2;

/** Incremental parser: feed chunks as they arrive, get back the commands they completed. */
export class RespCommandReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): RespCommand[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const commands: RespCommand[] = [];
    let offset = 0;
    for (;;) {
      const parsed = parseCommand(this.buffered, offset);
      if (!parsed) break;
      offset = parsed.next;
      if (parsed.command) commands.push(parsed.command);
    }
    this.buffered = offset === 0 ? this.buffered : this.buffered.subarray(offset);
    return commands;
  }
}

/** The index just past the CRLF of the line starting at `from`, or -1 while incomplete. */
function lineEnd(buffer: Buffer, from: number): number {
  const cr = buffer.indexOf(CRLF, from);
  return cr === -1 || cr + 1 >= buffer.length ? -1 : cr + 2;
}

/** Parses one command at `offset`; undefined while the buffer holds only part of it. */
function parseCommand(
  buffer: Buffer,
  offset: number,
): { command: RespCommand | undefined; next: number } | undefined {
  if (offset >= buffer.length) return undefined;
  const end = lineEnd(buffer, offset);
  if (end === -1) return undefined;
  if (buffer[offset] !== 0x2a /* '*' */) {
    // An inline command: one line of words (redis-cli and telnet speak it; ioredis does not).
    const words = buffer
      .subarray(offset, end - 2)
      .toString("latin1")
      .trim()
      .split(/\s+/u)
      .filter((w) => w !== "");
    const [name, ...rest] = words;
    const command = name
      ? { name: name.toUpperCase(), head: rest.slice(0, ARGS_KEPT).map((w) => Buffer.from(w)) }
      : undefined;
    return { command, next: end };
  }
  const count = Number(buffer.subarray(offset + 1, end - 2).toString("latin1"));
  let cursor = end;
  const args: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const header = lineEnd(buffer, cursor);
    if (header === -1) return undefined;
    if (buffer[cursor] !== 0x24 /* '$' */) throw new Error("RESP: expected a bulk string");
    const length = Number(buffer.subarray(cursor + 1, header - 2).toString("latin1"));
    const dataEnd = header + length;
    if (dataEnd + 2 > buffer.length) return undefined;
    if (i <= ARGS_KEPT) args.push(buffer.subarray(header, dataEnd));
    cursor = dataEnd + 2;
  }
  const [name, ...head] = args;
  return {
    command: name ? { name: name.toString("latin1").toUpperCase(), head } : undefined,
    next: cursor,
  };
}

/** Maps a script body to the operation it runs: the Lua file it ends with. */
export type ScriptNamer = (body: string) => string | undefined;

/** Names scripts by the files of a lua/ directory (`commit-8.lua` → `commit`). */
export function scriptNamerFromDir(dir: string): ScriptNamer {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".lua") && !f.startsWith("_"))
    .map((f) => ({
      name: f.replace(/(-(\d+(-\d+)?|n))?\.lua$/u, ""),
      text: readFileSync(`${dir}/${f}`, "utf8"),
    }));
  // The store prepends a shared prelude to each file; the operation's own text comes last.
  return (body) =>
    files.find((f) => body.endsWith(f.text))?.name ??
    files.find((f) => body.includes(f.text))?.name;
}

export const sha1 = (text: Buffer | string): string =>
  createHash("sha1").update(text).digest("hex");

/** Counts across every connection of one proxy. */
export interface CommandTally {
  commands: number;
  /** MULTI blocks opened (their commands are in `commands`). */
  multiBlocks: number;
  byName: Map<string, number>;
}

export function emptyTally(): CommandTally {
  return { commands: 0, multiBlocks: 0, byName: new Map() };
}

const WITH_SUBCOMMAND = new Set(["CLIENT", "SCRIPT", "CONFIG", "CLUSTER", "COMMAND", "FUNCTION"]);

/**
 * Tallies one client connection's commands into `tally`. The MULTI state is per connection;
 * script names learnt from EVAL bodies are shared through `scripts` (sha → name).
 */
export function createConnectionCounter(
  tally: CommandTally,
  scripts: Map<string, string>,
  nameScript: ScriptNamer,
): (chunk: Buffer) => void {
  const reader = new RespCommandReader();
  let inMulti = false;
  const label = (command: RespCommand): string => {
    const [first] = command.head;
    if (command.name === "EVALSHA" && first) {
      const sha = first.toString("latin1").toLowerCase();
      return `EVALSHA ${scripts.get(sha) ?? sha.slice(0, 8)}`;
    }
    if (command.name === "EVAL" && first) {
      const sha = sha1(first);
      // Not one of ours: another library's script (redlock's, from the sweep guard).
      const name = nameScript(first.toString("utf8")) ?? `other ${sha.slice(0, 8)}`;
      scripts.set(sha, name);
      return `EVAL ${name}`;
    }
    if (WITH_SUBCOMMAND.has(command.name) && first) {
      const sub = first.toString("latin1").toUpperCase();
      const body = command.head[1];
      if (command.name === "SCRIPT" && sub === "LOAD" && body) {
        const sha = sha1(body);
        scripts.set(sha, nameScript(body.toString("utf8")) ?? `other ${sha.slice(0, 8)}`);
      }
      return `${command.name} ${sub}`;
    }
    return command.name;
  };
  return (chunk) => {
    for (const command of reader.push(chunk)) {
      if (command.name === "MULTI") {
        inMulti = true;
        tally.multiBlocks++;
        continue;
      }
      if (command.name === "EXEC" || command.name === "DISCARD") {
        inMulti = false;
        continue;
      }
      const name = label(command) + (inMulti ? " (in MULTI)" : "");
      tally.commands++;
      tally.byName.set(name, (tally.byName.get(name) ?? 0) + 1);
    }
  };
}
