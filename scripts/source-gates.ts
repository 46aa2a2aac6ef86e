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

// The Lua gates live beside these (lua-gates.ts); check-source.ts and the tests import them here.
export { luaHeaderProblems, luaIncludeProblems } from "./lua-gates.js";
