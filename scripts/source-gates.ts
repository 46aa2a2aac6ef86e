// Checks of the source tree that no linter makes for us: import cycles, the production file and
// function size limits and the header of every Lua script. Pure functions over file names and
// texts, so the unit tests feed them small samples; scripts/check-source.ts runs them on the tree.
import { posix } from "node:path";
import ts from "typescript";

/** Module path (relative to the tree's root, with "/") → the modules it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/**
 * The relative imports between the given TypeScript files, static, type-only, re-exports and
 * dynamic ones alike (a type-only cycle is still two modules that cannot be read apart).
 * `./x.js` resolves to `x.ts`, as NodeNext resolution does; imports of packages and of files
 * outside the set are dropped.
 */
export function importGraph(files: ReadonlyMap<string, string>): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const [path, text] of files) {
    const targets = new Set<string>();
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith(".")) continue;
      const joined = posix.normalize(posix.join(posix.dirname(path), ref.fileName));
      const candidate = joined.replace(/\.js$/u, ".ts");
      if (files.has(candidate)) targets.add(candidate);
    }
    graph.set(path, [...targets].sort());
  }
  return graph;
}

/**
 * Every import cycle, one per strongly connected component, each as a path that starts and ends
 * at the component's first module in sorted order (a module importing itself included).
 */
export function findCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so deep chains cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const target = edges[frame.edge++]!;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components.map((component) => cycleThrough(graph, new Set(component))).sort();
}

/** A shortest path from the component's first module back to itself, inside the component. */
function cycleThrough(graph: ImportGraph, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.unshift(at);
        return [start, ...path];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

export interface OversizedFile {
  path: string;
  lines: number;
}

/** Lines as `wc -l` counts them, plus a last line without a newline. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** Files longer than `limit` lines that the allow-list does not name, longest first. */
export function oversizedFiles(
  files: ReadonlyMap<string, string>,
  limit: number,
  allowed: ReadonlyMap<string, string> = new Map(),
): OversizedFile[] {
  return [...files]
    .map(([path, text]) => ({ path, lines: lineCount(text) }))
    .filter((f) => f.lines > limit && !allowed.has(f.path))
    .sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path));
}

export interface LongFunction {
  path: string;
  /** 1-based line where the function starts. */
  line: number;
  name: string;
  ownLines: number;
}

const FUNCTION_KINDS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.Constructor,
]);

/** A function's own name, or the name it is bound to (`const f = () => …`, `{ f: () => … }`). */
function functionName(node: ts.Node, file: ts.SourceFile): string {
  if (node.kind === ts.SyntaxKind.Constructor) return "constructor";
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(file);
  const parent = node.parent as ts.Node & { name?: ts.Node };
  const bindsName =
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent);
  return bindsName && parent.name !== undefined ? parent.name.getText(file) : "<anonymous>";
}

/**
 * Function-like nodes (declarations, expressions, arrows, methods, accessors, constructors) whose
 * own lines exceed `limit`, longest first. A function's own lines are its lines of code (a line
 * holding a token: blank and comment-only lines never count) less every line of the functions
 * nested in it, so a factory that returns small methods is judged by its own body alone.
 */
export function longFunctions(files: ReadonlyMap<string, string>, limit: number): LongFunction[] {
  const found: LongFunction[] = [];
  for (const [path, text] of files) {
    for (const fn of measureFunctions(path, text)) {
      if (fn.ownLines > limit) {
        found.push({ path, line: fn.line, name: fn.name, ownLines: fn.ownLines });
      }
    }
  }
  return found.sort((a, b) => b.ownLines - a.ownLines || a.path.localeCompare(b.path));
}

export interface LargeFunction {
  path: string;
  /** 1-based line where the function starts. */
  line: number;
  name: string;
  /** Its lines of code together with those of every function nested in it. */
  totalLines: number;
}

/**
 * Top-level functions (not nested in another function; a class's methods count as top level)
 * whose lines of code, nested functions included, exceed `limit`, longest first. The own-lines
 * limit alone lets a closure factory grow without bound as long as each closure stays short; this
 * one measures the factory as the unit a reader has to hold in mind.
 */
export function largeFunctions(files: ReadonlyMap<string, string>, limit: number): LargeFunction[] {
  const found: LargeFunction[] = [];
  for (const [path, text] of files) {
    for (const fn of measureFunctions(path, text)) {
      if (fn.topLevel && fn.totalLines > limit) {
        found.push({ path, line: fn.line, name: fn.name, totalLines: fn.totalLines });
      }
    }
  }
  return found.sort((a, b) => b.totalLines - a.totalLines || a.path.localeCompare(b.path));
}

interface MeasuredFunction {
  line: number;
  name: string;
  topLevel: boolean;
  ownLines: number;
  totalLines: number;
}

/** Every function-like node of one file with its own and its total lines of code. */
function measureFunctions(path: string, text: string): MeasuredFunction[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const owned = new Map<ts.Node, Set<number>>();
  // Per function, the line spans (first, last) of the functions directly nested in it.
  const nested = new Map<ts.Node, [number, number][]>();
  const total = new Map<ts.Node, Set<number>>();
  const topLevel = new Set<ts.Node>();
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: ts.Node, owner: ts.Node | undefined, top: ts.Node | undefined): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) {
      return;
    }
    const isFunction = FUNCTION_KINDS.has(node.kind);
    if (isFunction && owner !== undefined) {
      nested.get(owner)?.push([lineOf(node.getStart(file)), lineOf(node.end)]);
    }
    const inner = isFunction ? node : owner;
    const outermost = top ?? (isFunction ? node : undefined);
    if (isFunction && top === undefined) {
      topLevel.add(node);
      total.set(node, new Set());
    }
    if (inner !== undefined && !owned.has(inner)) {
      owned.set(inner, new Set());
      nested.set(inner, []);
    }
    const children = node.getChildren(file);
    if (children.length === 0 && inner !== undefined && node.getStart(file) < node.end) {
      // A token may span lines (a template literal): each of them is code.
      for (let l = lineOf(node.getStart(file)); l <= lineOf(node.end); l += 1) {
        owned.get(inner)?.add(l);
        if (outermost !== undefined) total.get(outermost)?.add(l);
      }
    }
    for (const child of children) visit(child, inner, outermost);
  };
  visit(file, undefined, undefined);
  return [...owned].map(([node, lines]) => {
    const spans = nested.get(node) ?? [];
    const own = [...lines].filter((l) => !spans.some(([first, last]) => l >= first && l <= last));
    return {
      line: lineOf(node.getStart(file)) + 1,
      name: functionName(node, file),
      topLevel: topLevel.has(node),
      ownLines: own.length,
      totalLines: total.get(node)?.size ?? 0,
    };
  });
}

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
 * at run time, no slot the script does not read, and the replies. `_`-prefixed files are shared
 * helpers: no slots at all.
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
  const problems: string[] = [];
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
