// The import graph of src/ (import, import type, export ... from, and dynamic import(); relative
// paths only), its circles, and the edges that break a wall between its folders. A dynamic
// import() is an edge like any other: it loads later, but the importer still depends on the
// module it names, and a circle through it is still a circle.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const STATIC_IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** One import arrow: `from` imports `to` (paths relative to the root), lazily when `dynamic`. */
export interface ImportEdge {
  from: string;
  to: string;
  dynamic: boolean;
}

export type ImportGraph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every import arrow of the modules under `root`, static and dynamic, in file order. */
export function importEdges(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of sourceFiles(root).sort()) {
    const text = readFileSync(file, 'utf8');
    const from = relative(root, file);
    const target = (specifier: string): string =>
      relative(root, resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    for (const match of text.matchAll(STATIC_IMPORT)) edges.push({ from, to: target(match[1]!), dynamic: false });
    for (const match of text.matchAll(DYNAMIC_IMPORT)) edges.push({ from, to: target(match[1]!), dynamic: true });
  }
  return edges;
}

/** Modules of `root` (paths relative to it) and the modules each imports, statically or not. */
export function importGraph(root: string, edges: readonly ImportEdge[] = importEdges(root)): ImportGraph {
  const graph: ImportGraph = new Map(sourceFiles(root).map((file) => [relative(root, file), []]));
  for (const { from, to } of edges) {
    const targets = graph.get(from)!;
    if (!targets.includes(to)) targets.push(to);
  }
  return graph;
}

/** `from -> to`, as a wall violation or an allow-list entry names an edge. */
export function edgeName(edge: Pick<ImportEdge, 'from' | 'to'>): string {
  return `${edge.from} -> ${edge.to}`;
}

/**
 * The circles of the graph: each group of modules that reach one another (a strongly connected
 * component of more than one module, or a module importing itself), as its size, one path round
 * it from its first module, and its members. Tarjan's algorithm, one pass.
 */
export function findCircles(graph: ImportGraph): { size: number; path: string[]; members: string[] }[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) connect(node);
  return components
    .sort((a, b) => a[0]!.localeCompare(b[0]!))
    .map((members) => ({ size: members.length, path: shortestCycle(graph, members[0]!, new Set(members)), members }));
}

/** The shortest way from `start` back to itself inside `within` (breadth first). */
function shortestCycle(graph: ImportGraph, start: string, within: ReadonlySet<string>): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const node = queue[head]!;
    for (const next of graph.get(node) ?? []) {
      if (!within.has(next)) continue;
      if (next === start) {
        const back = [node];
        while (back[0] !== start) back.unshift(previous.get(back[0]!)!);
        return [...back, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}
