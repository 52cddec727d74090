/**
 * The files of workspaces. `WorkspaceFileSystems` opens the `WorkspaceFileSystem` of one workspace:
 * on a server a folder per workspace under `--workspaces-dir` (default `<data-dir>/workspaces`), in
 * the VS Code extension the open folder, in tests memory. Every adapter passes the contract suite in
 * `adapters/workspace-file-system.contract.ts`.
 *
 * Paths are relative to the workspace root, `/`-separated, without `..`, `.` or empty segments,
 * `\`, NUL or control characters (`domain/paths/safe-path.ts`, kind `relative`); `''` is the root
 * itself where a directory is meant; a trailing `/` is dropped (`docs/` is `docs`), and entries are
 * answered with their paths so spelled. Services check paths before they reach the port, and the port
 * checks them again: an unsafe path, or one that resolves outside the root through a symbolic link,
 * rejects with `WorkspacePathError` and touches nothing.
 *
 * Guarantees an adapter gives:
 * - `writeFile` is atomic: readers see the old content or the whole new one, never part of it; once
 *   it resolves the content is durable (it survives `kill -9` of the process). Past `maxBytes` it
 *   rejects with `WorkspaceFileTooLargeError` and leaves the old file (or none) as it was.
 * - Nothing follows a symbolic link out of the root: a path through such a link (or a link pointing
 *   nowhere) is refused with `WorkspacePathError`. A link whose target is inside the root is
 *   followed by `stat`, reads and writes; `delete` and `rename` act on the link itself. `list`,
 *   `walk` and `glob` skip every link (its target, when inside, is listed at its own path), so a
 *   walk never loops and a zip or a search never leaves the root.
 * - `rename` is atomic for a file and for a directory (the whole tree moves at once).
 * - `''` (the root) cannot be deleted nor renamed: remove the workspace instead.
 * - Missing paths: `stat` answers undefined; reads, `list`, `rename` and `delete` reject with
 *   `WorkspaceNotFoundError`; a file where a directory is needed (or the reverse) rejects with
 *   `WorkspaceConflictError`.
 */
export const WorkspaceFileSystems = Symbol.for('runloom.WorkspaceFileSystems');

export interface WorkspaceFileSystems {
  /** The files of workspace `workspaceId`; its root is created when missing. */
  open(workspaceId: string): Promise<WorkspaceFileSystem>;
  /** Deletes the workspace's root and everything in it; a missing root is not an error. */
  remove(workspaceId: string): Promise<void>;
}

export type WorkspaceEntryType = 'file' | 'directory';

/** What a glob without `stats` answers. */
export interface WorkspacePathEntry {
  /** Relative to the workspace root. */
  path: string;
  type: WorkspaceEntryType;
}

export interface WorkspaceEntry extends WorkspacePathEntry {
  /** Bytes of a file; 0 for a directory. */
  size: number;
  /** Last modification. */
  mtime: Date;
}

/** What `writeFile` answers: the file's entry, and whether the write created it or replaced one. */
export interface WrittenEntry extends WorkspaceEntry {
  /** No file was at the path before (false: an existing file was replaced). */
  created: boolean;
}

/** Inclusive byte offsets within the file (`0 <= start <= end < size`); a stream stops at the file's end. */
export interface FileByteRange {
  start: number;
  end: number;
}

export interface WriteFileOptions {
  /** Refuse content over this many bytes (`WorkspaceFileTooLargeError`). */
  maxBytes?: number;
  /** Create missing parent directories (default true). */
  createParents?: boolean;
  /** Fail with `WorkspaceConflictError` when the path exists (default false: replace the file). */
  exclusive?: boolean;
}

export interface WalkOptions {
  /** Deepest level listed: an entry directly under `path` has depth 1. */
  maxDepth: number;
}

export interface GlobOptions {
  /** Deepest level matched: an entry directly under the root has depth 1. */
  maxDepth: number;
  /** Also match directories (default true). */
  directories?: boolean;
  /**
   * Answer `size` and `mtime` too (default true). Without them a glob costs no syscall per match
   * beyond the directory reads, which is what a search over a large tree wants.
   */
  stats?: boolean;
}

export interface WorkspaceFileSystem {
  stat(path: string): Promise<WorkspaceEntry | undefined>;
  /** The file's bytes (or `range` of them) as a stream. */
  readFile(path: string, range?: FileByteRange): Promise<ReadableStream<Uint8Array>>;
  /** A small file's whole content (threads, configs); prefer `readFile` for anything large. */
  readBytes(path: string): Promise<Uint8Array>;
  /** Writes the file atomically and durably (see the guarantees); answers its entry and whether it is new. */
  writeFile(path: string, content: ReadableStream<Uint8Array> | Uint8Array | string, options?: WriteFileOptions): Promise<WrittenEntry>;
  /** Creates the directory and its missing parents; an existing directory is fine. */
  mkdir(path: string): Promise<WorkspaceEntry>;
  /** Deletes a file, or a directory with everything in it. */
  delete(path: string): Promise<void>;
  /** Moves a file or a directory; fails with `WorkspaceConflictError` when `to` exists. */
  rename(from: string, to: string): Promise<void>;
  /** The entries directly inside the directory (`''` is the root), sorted by path. */
  list(path: string): Promise<WorkspaceEntry[]>;
  /**
   * Every entry below the directory down to `maxDepth`, depth first: each directory right before
   * its contents, siblings sorted by name.
   */
  walk(path: string, options: WalkOptions): AsyncIterable<WorkspaceEntry>;
  /**
   * Entries whose root-relative path matches the glob, sorted by path. Picomatch syntax; `*` and
   * `**` do not match names starting with `.` unless the pattern spells the dot. The pattern obeys
   * the path rules (no leading `/`, `..`, `\`, …), else `WorkspacePathError`.
   */
  glob(pattern: string, options: GlobOptions & { stats: false }): Promise<WorkspacePathEntry[]>;
  glob(pattern: string, options: GlobOptions): Promise<WorkspaceEntry[]>;
  /**
   * The root as a folder on this machine's disk, when the files are there (the node-fs adapter);
   * tools that need a real folder (git, a shell command, LibreOffice) work in it. Undefined for
   * adapters that keep files elsewhere (memory).
   */
  readonly localRoot: string | undefined;
}

/** The path is unsafe or resolves outside the workspace root. */
export class WorkspacePathError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`path '${path}' is not allowed: ${reason}`);
    this.name = 'WorkspacePathError';
  }
}

export class WorkspaceNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`no file or directory at '${path}'`);
    this.name = 'WorkspaceNotFoundError';
  }
}

/** The path exists, or is a file where a directory is needed (or the reverse). */
export class WorkspaceConflictError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`'${path}': ${reason}`);
    this.name = 'WorkspaceConflictError';
  }
}

export class WorkspaceFileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is over the limit of ${maxBytes} bytes`);
    this.name = 'WorkspaceFileTooLargeError';
  }
}
