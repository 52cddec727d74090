import picomatch from 'picomatch';
import {
  type FileByteRange,
  type GlobOptions,
  type WalkOptions,
  type WorkspaceEntry,
  type WrittenEntry,
  WorkspaceConflictError,
  type WorkspaceFileSystem,
  type WorkspaceFileSystems,
  WorkspaceFileTooLargeError,
  WorkspaceNotFoundError,
  type WorkspacePathEntry,
  type WriteFileOptions,
} from '../../ports/workspace-file-system';
import { checkGlobPattern, comparePaths, depthOf, GLOB_DOT, parentPath, workspacePath } from '../workspace-paths';

/** Bytes per chunk of a read stream. */
const READ_CHUNK_BYTES = 64 * 1024;

/** Workspaces whose files live in this process's memory (tests, a host without a disk). */
export class MemoryWorkspaceFileSystems implements WorkspaceFileSystems {
  private readonly workspaces = new Map<string, MemoryWorkspaceFileSystem>();

  async open(workspaceId: string): Promise<WorkspaceFileSystem> {
    let files = this.workspaces.get(workspaceId);
    if (!files) {
      files = new MemoryWorkspaceFileSystem();
      this.workspaces.set(workspaceId, files);
    }
    return files;
  }

  async remove(workspaceId: string): Promise<void> {
    this.workspaces.delete(workspaceId);
  }
}

type MemoryNode = { type: 'file'; bytes: Uint8Array; mtime: Date } | { type: 'directory'; mtime: Date };

/**
 * One workspace's files as a map from path to node; `''` is the root directory. Each change is one
 * synchronous step once its content is in hand, so readers see the old state or the new one. There
 * are no links here, so nothing can lead out of the root.
 */
export class MemoryWorkspaceFileSystem implements WorkspaceFileSystem {
  readonly localRoot = undefined;
  private readonly nodes = new Map<string, MemoryNode>([['', { type: 'directory', mtime: new Date() }]]);

  async stat(given: string): Promise<WorkspaceEntry | undefined> {
    const path = workspacePath(given, 'directory');
    const node = this.nodes.get(path);
    return node && entryOf(path, node);
  }

  async readFile(path: string, range?: FileByteRange): Promise<ReadableStream<Uint8Array>> {
    const bytes = this.file(path);
    let position = range?.start ?? 0;
    const end = Math.min(range ? range.end + 1 : bytes.byteLength, bytes.byteLength);
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (position >= end) {
          controller.close();
          return;
        }
        const next = Math.min(end, position + READ_CHUNK_BYTES);
        controller.enqueue(bytes.slice(position, next));
        position = next;
      },
    });
  }

  async readBytes(path: string): Promise<Uint8Array> {
    return this.file(path).slice();
  }

  async writeFile(given: string, content: ReadableStream<Uint8Array> | Uint8Array | string, options: WriteFileOptions = {}): Promise<WrittenEntry> {
    const { maxBytes = Number.POSITIVE_INFINITY, createParents = true, exclusive = false } = options;
    const path = workspacePath(given, 'entry');
    this.checkWritable(path, exclusive);
    // Parents first, as on a disk, where the content streams into a file beside the target.
    this.makeParents(path, createParents);
    const bytes = await bytesOf(content, maxBytes);
    // Checked again: the content may have streamed in for a while, and the write is one step from here.
    this.checkWritable(path, exclusive);
    this.makeParents(path, createParents);
    const node: MemoryNode = { type: 'file', bytes, mtime: new Date() };
    const created = !this.nodes.has(path);
    this.nodes.set(path, node);
    return { ...entryOf(path, node), created };
  }

  async mkdir(given: string): Promise<WorkspaceEntry> {
    const path = workspacePath(given, 'directory');
    const existing = this.nodes.get(path);
    if (existing?.type === 'file') throw new WorkspaceConflictError(path, 'a file is where a directory is needed');
    this.makeParents(path, true);
    if (!existing) this.nodes.set(path, { type: 'directory', mtime: new Date() });
    return entryOf(path, this.nodes.get(path) as MemoryNode);
  }

  async delete(given: string): Promise<void> {
    const path = workspacePath(given, 'entry');
    if (!this.nodes.has(path)) throw new WorkspaceNotFoundError(path);
    for (const key of this.subtree(path)) this.nodes.delete(key);
  }

  async rename(givenFrom: string, givenTo: string): Promise<void> {
    const from = workspacePath(givenFrom, 'entry');
    const to = workspacePath(givenTo, 'entry');
    if (!this.nodes.has(from)) throw new WorkspaceNotFoundError(from);
    if (to === from || to.startsWith(`${from}/`)) throw new WorkspaceConflictError(to, `cannot move '${from}' into itself`);
    if (this.nodes.has(to)) throw new WorkspaceConflictError(to, 'something is already there');
    this.makeParents(to, true);
    const moved = this.subtree(from).map((key) => [key, this.nodes.get(key) as MemoryNode] as const);
    for (const [key] of moved) this.nodes.delete(key);
    for (const [key, node] of moved) this.nodes.set(to + key.slice(from.length), node);
  }

  async list(path: string): Promise<WorkspaceEntry[]> {
    return this.children(path);
  }

  async *walk(path: string, { maxDepth }: WalkOptions): AsyncIterable<WorkspaceEntry> {
    // Taken whole before the first entry is handed out: changes made during the walk do not tear it.
    const below = (entries: WorkspaceEntry[], depth: number): WorkspaceEntry[] =>
      entries.flatMap((entry) => (entry.type === 'directory' && depth < maxDepth ? [entry, ...below(this.children(entry.path), depth + 1)] : [entry]));
    const top = this.children(path);
    yield* maxDepth < 1 ? [] : below(top, 1);
  }

  glob(pattern: string, options: GlobOptions & { stats: false }): Promise<WorkspacePathEntry[]>;
  glob(pattern: string, options: GlobOptions): Promise<WorkspaceEntry[]>;
  async glob(pattern: string, { maxDepth, directories = true, stats = true }: GlobOptions): Promise<WorkspacePathEntry[]> {
    checkGlobPattern(pattern);
    const matches = picomatch(pattern, { dot: GLOB_DOT });
    const found: WorkspacePathEntry[] = [];
    for (const [path, node] of this.nodes) {
      if (path === '' || (node.type === 'directory' && !directories) || depthOf(path) > maxDepth || !matches(path)) continue;
      found.push(stats ? entryOf(path, node) : { path, type: node.type });
    }
    return found.sort((a, b) => comparePaths(a.path, b.path));
  }

  private file(given: string): Uint8Array {
    const path = workspacePath(given, 'entry');
    this.parentDirectory(path);
    const node = this.nodes.get(path);
    if (!node) throw new WorkspaceNotFoundError(path);
    if (node.type === 'directory') throw new WorkspaceConflictError(path, 'a directory is there, not a file');
    return node.bytes;
  }

  private checkWritable(path: string, exclusive: boolean): void {
    const existing = this.nodes.get(path);
    if (existing?.type === 'directory') throw new WorkspaceConflictError(path, 'a directory is there');
    if (existing && exclusive) throw new WorkspaceConflictError(path, 'a file is already there');
  }

  /** Creates the missing directories above `path` (or, without `create`, requires them). */
  private makeParents(path: string, create: boolean): void {
    const segments = path.split('/');
    for (let count = 1; count < segments.length; count += 1) {
      const ancestor = segments.slice(0, count).join('/');
      const node = this.nodes.get(ancestor);
      if (node?.type === 'file') throw new WorkspaceConflictError(path, 'a file is where a directory is needed');
      if (node) continue;
      if (!create) throw new WorkspaceNotFoundError(parentPath(path));
      this.nodes.set(ancestor, { type: 'directory', mtime: new Date() });
    }
  }

  /** A file among the ancestors of `path` makes it a conflict, as on a disk (ENOTDIR). */
  private parentDirectory(path: string): void {
    const segments = path.split('/');
    for (let count = 1; count < segments.length; count += 1) {
      if (this.nodes.get(segments.slice(0, count).join('/'))?.type === 'file') {
        throw new WorkspaceConflictError(path, 'a file is where a directory is needed');
      }
    }
  }

  private children(given: string): WorkspaceEntry[] {
    const path = workspacePath(given, 'directory');
    this.parentDirectory(path);
    const node = this.nodes.get(path);
    if (!node) throw new WorkspaceNotFoundError(path);
    if (node.type === 'file') throw new WorkspaceConflictError(path, 'a file is where a directory is needed');
    const entries: WorkspaceEntry[] = [];
    for (const [key, child] of this.nodes) {
      if (key !== '' && parentPath(key) === path) entries.push(entryOf(key, child));
    }
    return entries.sort((a, b) => comparePaths(a.path, b.path));
  }

  /** `path` and everything below it. */
  private subtree(path: string): string[] {
    return [...this.nodes.keys()].filter((key) => key === path || key.startsWith(`${path}/`));
  }
}

function entryOf(path: string, node: MemoryNode): WorkspaceEntry {
  return { path, type: node.type, size: node.type === 'file' ? node.bytes.byteLength : 0, mtime: node.mtime };
}

/** The whole content, copied; past `maxBytes` the source is cancelled and the write refused. */
async function bytesOf(content: ReadableStream<Uint8Array> | Uint8Array | string, maxBytes: number): Promise<Uint8Array> {
  if (typeof content === 'string') content = new TextEncoder().encode(content);
  if (content instanceof Uint8Array) {
    if (content.byteLength > maxBytes) throw new WorkspaceFileTooLargeError(maxBytes);
    return content.slice();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = content.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new WorkspaceFileTooLargeError(maxBytes);
      }
      chunks.push(value.slice());
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
