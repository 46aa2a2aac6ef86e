// Gates over the Redis store's Lua (src/store/redis/lua, ADR 0002 and 0035): each script's header
// names every slot it reads and its replies, the script binds its numbered slots to named locals
// at its top, and it includes exactly the helper files whose helpers it calls. Pure functions over
// file names and texts; scripts/check-source.ts runs them on the tree.

/**
 * `<operation>-<number of KEYS>.lua`; `-<min>-<max>` when the last keys are optional (the header
 * names all max of them, ADR 0024); or `-n` when each call gives the key count.
 */
const SCRIPT_NAME = /^[a-z][A-Za-z]*-(?:\d+-)?(\d+|n)\.lua$/u;
const SLOT = /\b(KEYS|ARGV)\[(\d+)\]/gu;
/** `ARGV[4..]`, `ARGV[2..n]`: every slot from the first number on. */
const SLOT_RANGE = /\b(KEYS|ARGV)\[(\d+)\.\.[^\]]*\]/gu;
/** A slot chosen at run time: `ARGV[i]`, `#ARGV`, `unpack(ARGV, ...)`. */
const DYNAMIC_USE = /\b(KEYS|ARGV)\[(?!\d+\])|#(KEYS|ARGV)\b|unpack\((KEYS|ARGV)\b/gu;

type Table = "KEYS" | "ARGV";

/**
 * What is wrong with one script's header (an empty list when nothing is). The header is the run
 * of comment lines the file opens with; it must name every KEYS[n] and ARGV[n] the script reads,
 * exactly KEYS[1..N] for a file named `name-N.lua` (the range KEYS[1..] for `name-n.lua`), a range (`ARGV[k..]`) when slots are chosen
 * at run time, no slot the script does not read, and the replies; and each numbered slot read once,
 * by a `local name = KEYS[n]` line at the top of the body (slotBindingProblems). `_`-prefixed
 * files are shared helpers: no slots at all.
 */
export function luaHeaderProblems(fileName: string, text: string): string[] {
  const lines = text.split("\n");
  const headerEnd = lines.findIndex((line) => !line.startsWith("--"));
  const header = lines.slice(0, headerEnd === -1 ? lines.length : headerEnd).join("\n");
  const body = lines
    .slice(headerEnd === -1 ? lines.length : headerEnd)
    .map((line) => line.replace(/--.*$/u, ""))
    .join("\n");

  if (fileName.startsWith("_")) {
    const used = [...body.matchAll(SLOT)].length + [...body.matchAll(DYNAMIC_USE)].length;
    return used > 0 ? [`${fileName}: a shared helper file must not read KEYS or ARGV`] : [];
  }
  const nameMatch = SCRIPT_NAME.exec(fileName);
  if (!nameMatch) {
    return [`${fileName}: the name must be <operation>-<number of KEYS, or min-max, or n>.lua`];
  }
  const variadic = nameMatch[1] === "n";
  const keyCount = variadic ? 0 : Number(nameMatch[1]);
  const problems: string[] = slotBindingProblems(body).map((p) => `${fileName}: ${p}`);
  const say = (message: string) => problems.push(`${fileName}: ${message}`);

  const named: Record<Table, Set<number>> = { KEYS: new Set(), ARGV: new Set() };
  const rangeFrom: Record<Table, number | undefined> = { KEYS: undefined, ARGV: undefined };
  for (const m of header.matchAll(SLOT)) named[m[1] as Table].add(Number(m[2]));
  for (const m of header.matchAll(SLOT_RANGE)) {
    const table = m[1] as Table;
    rangeFrom[table] = Math.min(rangeFrom[table] ?? Infinity, Number(m[2]));
  }
  const used: Record<Table, Set<number>> = { KEYS: new Set(), ARGV: new Set() };
  for (const m of body.matchAll(SLOT)) used[m[1] as Table].add(Number(m[2]));
  const dynamic = new Set<Table>();
  for (const m of body.matchAll(DYNAMIC_USE)) dynamic.add((m[1] ?? m[3] ?? m[4]) as Table);

  const covered = (table: Table, slot: number) =>
    named[table].has(slot) || (rangeFrom[table] !== undefined && slot >= rangeFrom[table]);

  if (variadic) {
    if (rangeFrom.KEYS !== 1 || named.KEYS.size > 0) {
      say("a script whose calls give the key count names its keys as one range, KEYS[1..]");
    }
  } else if (rangeFrom.KEYS !== undefined) say("KEYS must be named one by one, not as a range");
  for (let slot = 1; slot <= keyCount; slot += 1) {
    if (!named.KEYS.has(slot)) say(`the header does not name KEYS[${slot}]`);
  }
  for (const slot of [...named.KEYS].sort((a, b) => a - b)) {
    if (slot > keyCount && !variadic)
      say(`the header names KEYS[${slot}] but the file name says ${keyCount} keys`);
  }
  for (const table of ["KEYS", "ARGV"] as const) {
    for (const slot of [...used[table]].sort((a, b) => a - b)) {
      if (!covered(table, slot))
        say(`the script reads ${table}[${slot}], which the header does not name`);
    }
    // A stale header is as misleading as a missing one. Slots read at run time (`ARGV[i]` in a
    // loop, `unpack(KEYS)`) count as read from where the header's range starts.
    const readFrom = dynamic.has(table) ? (table === "KEYS" ? 1 : rangeFrom[table]) : undefined;
    for (const slot of [...named[table]].sort((a, b) => a - b)) {
      const readAtRunTime = readFrom !== undefined && slot >= readFrom;
      if (!used[table].has(slot) && !readAtRunTime) {
        say(`the header names ${table}[${slot}], which the script never reads`);
      }
    }
  }
  if (dynamic.has("ARGV") && rangeFrom.ARGV === undefined) {
    say(
      "the script reads ARGV slots chosen at run time; the header must name them as a range (ARGV[k..])",
    );
  }
  if (!/^--\s*Replies:/mu.test(header))
    say('the header does not name the replies ("-- Replies: ...")');
  return problems;
}

/** `local name = KEYS[n]`: a numbered slot bound to a named local. */
const BINDING = /^local [A-Za-z_]\w* = (KEYS|ARGV)\[(\d+)\]\s*$/u;

/**
 * A script reads each numbered slot once, in a binding line, and the bindings come before its
 * first statement: the body then speaks of `lease_key`, not `KEYS[5]`, and the top of the
 * script says what it takes. Slots chosen at run time (`ARGV[i]`, `unpack(KEYS)`) stay as they
 * are. `body` is the script after its header, comments removed.
 */
function slotBindingProblems(body: string): string[] {
  const problems: string[] = [];
  const bound = new Set<string>();
  let statements = 0;
  for (const line of body.split("\n").map((l) => l.trim())) {
    if (line === "") continue;
    const binding = BINDING.exec(line);
    if (binding) {
      const slot = `${binding[1]}[${binding[2]}]`;
      if (bound.has(slot)) problems.push(`binds ${slot} twice`);
      if (statements > 0)
        problems.push(`binds ${slot} after its first statement; bind slots at the top`);
      bound.add(slot);
      continue;
    }
    statements += 1;
    for (const m of line.matchAll(SLOT)) {
      problems.push(
        `reads ${m[1]}[${m[2]}] in its body; bind it at the top (local name = ${m[1]}[${m[2]}])`,
      );
    }
  }
  return problems;
}

/** `--- @include "name"`: the script inlines `_name.lua` (src/store/redis/lua-includes.ts). */
const INCLUDE = /^---\s*@include\s+"([a-z][a-z0-9-]*)"\s*$/gmu;
const HELPER_FILE = /^_([a-z][a-z0-9-]*)\.lua$/u;
/** A top-level definition of a helper file: `local function name` or `local NAME =`. */
const DEFINITION = /^local (?:function )?([A-Za-z_]\w*)/gmu;
const IDENTIFIER = /[A-Za-z_]\w*/gu;

/** Lua code without comments and string literals, so only names in code are counted. */
function luaCode(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/--.*$/u, ""))
    .join("\n")
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/gu, "''");
}

/**
 * What is wrong with the includes of the Lua files (file name → text, helper files included):
 * an unknown name or a cycle; a helper used but not reachable through the file's includes (it
 * would be a nil global on Redis); an include that the file uses nothing of; a helper defined in
 * two files. A file uses what it calls itself: reaching a helper through another include is not
 * enough, so each file says what it uses.
 */
export function luaIncludeProblems(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  const definedIn = new Map<string, string>();
  const definitions = new Map<string, Set<string>>();
  const includes = new Map<string, string[]>();
  for (const [file, text] of files) {
    includes.set(
      file,
      [...text.matchAll(INCLUDE)].map((m) => m[1] as string),
    );
    const helper = HELPER_FILE.exec(file)?.[1];
    if (helper === undefined) continue;
    const names = new Set([...luaCode(text).matchAll(DEFINITION)].map((m) => m[1] as string));
    definitions.set(helper, names);
    for (const name of names) {
      const other = definedIn.get(name);
      if (other !== undefined) problems.push(`${file}: ${name} is also defined in _${other}.lua`);
      else definedIn.set(name, helper);
    }
  }
  const reach = (file: string): Set<string> => {
    const seen = new Set<string>();
    const walk = (names: readonly string[], path: readonly string[]): void => {
      for (const name of names) {
        if (path.includes(name))
          problems.push(`${file}: include cycle ${[...path, name].join(" -> ")}`);
        else if (!seen.has(name) && definitions.has(name)) {
          seen.add(name);
          walk(includes.get(`_${name}.lua`) ?? [], [...path, name]);
        }
      }
    };
    walk(includes.get(file) ?? [], [HELPER_FILE.exec(file)?.[1] ?? file]);
    return seen;
  };
  for (const [file, text] of files) {
    const own = HELPER_FILE.exec(file)?.[1];
    const code = luaCode(text);
    const localNames = new Set([...code.matchAll(DEFINITION)].map((m) => m[1] as string));
    const used = new Set(
      [...code.matchAll(IDENTIFIER)]
        .map((m) => m[0])
        .filter((n) => definedIn.has(n) && definedIn.get(n) !== own && !localNames.has(n)),
    );
    const reachable = reach(file);
    for (const name of includes.get(file) ?? []) {
      if (!definitions.has(name))
        problems.push(`${file}: includes "${name}", but there is no _${name}.lua`);
      else if (![...used].some((n) => definedIn.get(n) === name)) {
        problems.push(`${file}: includes "${name}" but uses nothing it defines`);
      }
    }
    for (const name of [...used].sort()) {
      const home = definedIn.get(name) as string;
      if (!reachable.has(home)) problems.push(`${file}: uses ${name} without including "${home}"`);
      else if (!(includes.get(file) ?? []).includes(home)) {
        problems.push(`${file}: uses ${name} from "${home}" but does not include it itself`);
      }
    }
  }
  return problems;
}
