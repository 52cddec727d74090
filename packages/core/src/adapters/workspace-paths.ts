import { pathProblem } from '../domain/paths/safe-path';
import { WorkspacePathError } from '../ports/workspace-file-system';

/**
 * What every `WorkspaceFileSystem` adapter checks the same way: paths and glob patterns (through
 * the one safe-path rule, `domain/paths/safe-path.ts`), depths and the order of listings, so the
 * adapters cannot drift apart on them (the contract suite holds them to it).
 */

/**
 * The path as the adapters use it, or `WorkspacePathError` when it is unsafe; `''` (the root) only
 * where a directory is meant. The rule lets a path end in `/` (`docs/`); that `/` is dropped, so
 * `docs/` and `docs` are one entry.
 */
export function workspacePath(path: string, meaning: 'entry' | 'directory'): string {
  const problem = pathProblem(path, { field: 'path', kind: 'relative', allowEmpty: meaning === 'directory' });
  if (problem) throw new WorkspacePathError(path, problem);
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * Refuses a glob that could reach outside the root: a leading `/`, `..` segments (tinyglobby would
 * crawl from the parent), NUL or control characters. `\` is refused too: the safe-path rule has no
 * escapes, so a pattern names files the way paths do.
 */
export function checkGlobPattern(pattern: string): void {
  const problem = pathProblem(pattern, { field: 'glob pattern', kind: 'relative' });
  if (problem) throw new WorkspacePathError(pattern, problem);
}

/**
 * Whether `*` and `**` match names starting with `.`: no, as in picomatch's defaults and shells, so
 * a repository's `.git` stays out of a search for everything; a pattern that spells the dot
 * (`.runloom/*.yaml`) matches them. The same for tinyglobby (node) and picomatch (memory).
 */
export const GLOB_DOT = false;

/** The depth of a root-relative path: an entry directly under the root has depth 1. */
export function depthOf(path: string): number {
  let depth = 1;
  for (let index = path.indexOf('/'); index !== -1; index = path.indexOf('/', index + 1)) depth += 1;
  return depth;
}

/** `name` inside the directory `parent` (`''` is the root). */
export function childPath(parent: string, name: string): string {
  return parent === '' ? name : `${parent}/${name}`;
}

/** The directory holding `path` (`''`: the root). */
export function parentPath(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

/** The one order of listings and globs: by path, code unit by code unit (locale-independent). */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
