// Gate over src: no import cycles, production files and functions within their size limits (a
// function's own lines, and a top-level function with all it nests), and every Lua script with a
// complete header, its slots bound to named locals and exactly the includes it uses
// (scripts/lua-gates.ts). Prints each finding; exits 1 on any.
// Usage: npx tsx scripts/check-source.ts
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import {
  findCycles,
  importGraph,
  largeFunctions,
  longFunctions,
  luaHeaderProblems,
  luaIncludeProblems,
  oversizedFiles,
} from "./source-gates.js";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const LINE_LIMIT = 400;
/** A function's own lines: without its nested functions, blank lines and comments. */
const FUNCTION_LIMIT = 80;
/** A top-level function with everything it nests (a factory and its closures), in lines of code. */
const TOTAL_FUNCTION_LIMIT = 150;
const LUA_DIR = "src/store/redis/lua";

/**
 * Production files allowed past the limit for now, each with the reason (path → reason). Empty:
 * keep it so, or say here why a file cannot be split by responsibility yet.
 */
const SIZE_ALLOWED = new Map<string, string>([]);

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? walk(path) : [path];
  });
}

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const sources = new Map(
  walk("src")
    .filter((path) => path.endsWith(".ts"))
    .map((path) => [path, read(path)] as const),
);
const production = new Map([...sources].filter(([path]) => !path.startsWith("src/gen/")));

const findings: string[] = [];
for (const cycle of findCycles(importGraph(sources))) {
  findings.push(`import cycle: ${cycle.join(" -> ")}`);
}
for (const file of oversizedFiles(production, LINE_LIMIT, SIZE_ALLOWED)) {
  findings.push(
    `${file.path}: ${file.lines} lines (limit ${LINE_LIMIT}; split it by responsibility)`,
  );
}
for (const path of SIZE_ALLOWED.keys()) {
  if (!production.has(path)) findings.push(`${path}: on the size allow-list but gone; remove it`);
}
for (const fn of longFunctions(production, FUNCTION_LIMIT)) {
  findings.push(
    `${fn.path}:${fn.line} ${fn.name}: ${fn.ownLines} own lines (limit ${FUNCTION_LIMIT}; split it into named steps)`,
  );
}
for (const fn of largeFunctions(production, TOTAL_FUNCTION_LIMIT)) {
  findings.push(
    `${fn.path}:${fn.line} ${fn.name}: ${fn.totalLines} lines with what it nests (limit ${TOTAL_FUNCTION_LIMIT}; split it along its seams)`,
  );
}
const luaFiles = new Map<string, string>();
for (const path of walk(LUA_DIR).filter((p) => p.endsWith(".lua"))) {
  const name = relative(join(ROOT, LUA_DIR), join(ROOT, path)).split(sep).join("/");
  luaFiles.set(name, read(path));
  findings.push(...luaHeaderProblems(name, read(path)).map((p) => `${LUA_DIR}/${p}`));
}
findings.push(...luaIncludeProblems(luaFiles).map((p) => `${LUA_DIR}/${p}`));

for (const finding of findings) console.error(finding);
if (findings.length > 0) process.exit(1);
console.log(
  `check-source: ${sources.size} modules without cycles, ${production.size} production files within ${LINE_LIMIT} lines and their functions within ${FUNCTION_LIMIT} own and ${TOTAL_FUNCTION_LIMIT} total lines, Lua headers, slot bindings and includes complete`,
);
