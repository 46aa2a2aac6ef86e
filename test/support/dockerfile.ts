// A small Dockerfile reader for tests: stages and their instructions, so a test can run what the
// image runs (CMD, ENTRYPOINT, ENV, EXPOSE, COPY) instead of a copy that drifts from it.
import { readFileSync } from "node:fs";

export interface Instruction {
  keyword: string;
  /** The text after the keyword, continuation lines joined. */
  args: string;
}

export interface Stage {
  name: string | undefined;
  from: string;
  instructions: Instruction[];
}

export function parseDockerfile(path: string): Stage[] {
  const stages: Stage[] = [];
  let pending = "";
  for (const raw of readFileSync(path, "utf8").split("\n")) {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.startsWith("#")) continue; // comments inside a continued instruction
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const text = pending + line;
    pending = "";
    const match = /^(\S+)\s*(.*)$/u.exec(text);
    if (!match?.[1]) continue;
    const keyword = match[1].toUpperCase();
    const args = (match[2] ?? "").trim();
    if (keyword === "FROM") {
      const from = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/iu.exec(args);
      if (!from?.[1]) throw new Error(`unreadable FROM: ${args}`);
      stages.push({ from: from[1], name: from[2], instructions: [] });
      continue;
    }
    const current = stages.at(-1);
    if (current) current.instructions.push({ keyword, args });
  }
  return stages;
}

export function stage(stages: Stage[], name: string): Stage {
  const found = stages.find((s) => s.name === name);
  if (!found) throw new Error(`no stage ${name}`);
  return found;
}

/** The exec (JSON) form of CMD or ENTRYPOINT; the shell form is refused on purpose. */
export function execForm(s: Stage, keyword: "CMD" | "ENTRYPOINT"): string[] | undefined {
  const found = s.instructions.filter((i) => i.keyword === keyword).at(-1);
  if (!found) return undefined;
  const parsed: unknown = JSON.parse(found.args);
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === "string")) {
    throw new Error(`${keyword} must be a JSON array of strings: ${found.args}`);
  }
  return parsed as string[];
}

/** ENV lines in `KEY=value` form (one or more per line, no quoting). */
export function envOf(s: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of s.instructions.filter((i) => i.keyword === "ENV")) {
    for (const pair of i.args.split(/\s+/u)) {
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new Error(`ENV must be KEY=value: ${i.args}`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return env;
}

export function exposedPorts(s: Stage): number[] {
  return s.instructions
    .filter((i) => i.keyword === "EXPOSE")
    .flatMap((i) => i.args.split(/\s+/u))
    .map((p) => Number(p.replace(/\/tcp$/u, "")));
}

export function argsOf(s: Stage, keyword: string): string[] {
  return s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}
