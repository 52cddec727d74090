import { isCollection, isNode, isPair, type Document, type LineCounter } from 'yaml';

/**
 * What every YAML configuration (runnables, workspaces) needs of a parsed `yaml` Document beyond the
 * library: the one depth limit of structured input (`json-depth.ts`), and positions for diagnostics.
 */

/**
 * Whether a YAML node tree (a Document's `contents`) nests collections more than `limit` deep,
 * walked without recursion: checked before `toJS`, which recurses.
 */
export function yamlDepthOver(root: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[root, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (isPair(node)) {
      pending.push([node.key, depth], [node.value, depth]);
      continue;
    }
    if (!isCollection(node)) continue;
    if (depth + 1 > limit) return true;
    for (const item of node.items) pending.push([item, depth + 1]);
  }
  return false;
}

/** The 1-based position of the deepest node of `path` that exists in the text (none for an empty text). */
export function locateYamlPath(
  document: Document,
  lineCounter: LineCounter,
  path: readonly (string | number)[],
): { line: number; column: number } | Record<string, never> {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? document.contents : document.getIn(path.slice(0, depth), true);
    if (isNode(node) && node.range) {
      const { line, col } = lineCounter.linePos(node.range[0]);
      return { line, column: col };
    }
  }
  return {};
}
