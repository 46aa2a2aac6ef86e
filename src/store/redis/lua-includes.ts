// The include directive of the Redis store's Lua (ADR 0035). A script names the helper files it
// calls with `--- @include "name"` lines (the file `_name.lua`); the loader inlines each such file
// once, after the files it includes in turn, ahead of the script. Redis runs one self-contained
// chunk per script, so this is the only way to share Lua between scripts, and a script carries
// only the helpers it uses instead of every helper of the store.

/** A well-formed directive; the name is the helper file's name without `_` and `.lua`. */
const INCLUDE = /^---\s*@include\s+"([a-z][a-z0-9-]*)"\s*$/u;
/** Anything that looks like a directive, so a malformed one fails instead of being ignored. */
const INCLUDE_LIKE = /^---?\s*@include\b/u;

/** The included names of one Lua file, in the order its directive lines give them. */
export function includesOf(fileName: string, text: string): string[] {
  const names: string[] = [];
  for (const line of text.split("\n")) {
    if (!INCLUDE_LIKE.test(line)) continue;
    const match = INCLUDE.exec(line);
    if (!match) throw new Error(`${fileName}: malformed include line: ${line}`);
    names.push(match[1] as string);
  }
  return names;
}

/** The text of the helper file `_<name>.lua`, or undefined when there is none. */
export type IncludeReader = (name: string) => string | undefined;

/**
 * The helper files a script pulls in, each once, every one after those it includes (depth
 * first, in the order named), followed by the script's own text unchanged. Throws, naming the
 * file, for an unknown name or a cycle: a script that cannot be assembled fails at load time,
 * not on Redis.
 */
export function resolveIncludes(fileName: string, text: string, read: IncludeReader): string {
  const done = new Set<string>();
  const parts: string[] = [];
  const visit = (from: string, body: string, path: readonly string[]): void => {
    for (const name of includesOf(from, body)) {
      if (path.includes(name)) {
        throw new Error(`${fileName}: include cycle ${[...path, name].join(" -> ")}`);
      }
      if (done.has(name)) continue;
      const included = read(name);
      if (included === undefined) {
        throw new Error(`${from}: includes "${name}", but there is no _${name}.lua`);
      }
      visit(`_${name}.lua`, included, [...path, name]);
      done.add(name);
      parts.push(included);
    }
  };
  visit(fileName, text, []);
  return [...parts, text].join("\n");
}
