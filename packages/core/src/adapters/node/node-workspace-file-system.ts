import { randomBytes } from 'node:crypto';
import { constants as fsConstants, type Dirent, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import nodePath from 'node:path';
import picomatch from 'picomatch';
import { glob as tinyglobby } from 'tinyglobby';
import { pathProblem } from '../../domain/paths/safe-path';
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
  WorkspacePathError,
  type WriteFileOptions,
} from '../../ports/workspace-file-system';
import { checkGlobPattern, childPath, comparePaths, depthOf, GLOB_DOT, parentPath, workspacePath } from '../workspace-paths';
import { errorCode, fileReadStream, isMissing, readBytesOf, syncDirectory, writeAll, writeStreamToFile } from './durable-file-io';

/**
 * Temporary files of writes in flight: `.runloom-tmp-<32 hex>`, in the directory of the file they
 * become (a rename within one directory never crosses a mount, and leaves no folder of our own in a
 * user's project). The name is reserved: such entries never show in `list`, `walk` or `glob`, and
 * a path naming one is refused. One a crash left behind is swept when a listing or walk meets it.
 */
const TEMP_PREFIX = '.runloom-tmp-';
const TEMP_NAME = /^\.runloom-tmp-[0-9a-f]{32}$/;

/** Whether a file name is one of a write in flight (a watcher of the folder leaves those out). */
export function isWorkspaceTempName(name: string): boolean {
  return TEMP_NAME.test(name);
}
/** A temporary file older than this belongs to a write that a crash cut off. */
const STALE_TEMP_MS = 60 * 60 * 1000;
/**
 * What Linux holds: a whole path of 4095 bytes and names of 255 bytes. The safe-path rule counts
 * characters of the path alone; the root's folder, a temporary name and UTF-8 add to it, so a path
 * that would fail halfway (a few parents made, then ENAMETOOLONG) is refused before anything is made.
 */
const PATH_MAX_BYTES = 4095;
const NAME_MAX_BYTES = 255;
const TEMP_NAME_BYTES = TEMP_PREFIX.length + 32;
/** Stats in flight at once when a glob answers sizes and times: enough to keep libuv's threads busy. */
const STAT_CONCURRENCY = 1024;
/** Opens the file a path resolved to for reading: a link swapped in meanwhile fails (ELOOP), a FIFO does not block. */
const READ_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;
/** What `readBytes` reads beside the stat: most thread, config and command files whole. */
const FIRST_READ_BYTES = 16 * 1024;

/**
 * Workspaces as folders on this machine's disk. Given a folder, each workspace is the folder
 * `<base>/<workspaceId>` (the server's `--workspaces-dir`); given a function, its answer is the
 * root, so a host can root a workspace anywhere (the VS Code extension: at the open folder).
 * `remove` deletes that folder, whichever it is.
 */
export class NodeWorkspaceFileSystems implements WorkspaceFileSystems {
  private readonly rootOf: (workspaceId: string) => string;

  constructor(where: string | ((workspaceId: string) => string)) {
    if (typeof where === 'function') {
      this.rootOf = where;
      return;
    }
    const base = nodePath.resolve(where);
    this.rootOf = (workspaceId) => {
      const problem = pathProblem(workspaceId, { field: 'workspace id', kind: 'segment' });
      if (problem) throw new WorkspacePathError(workspaceId, problem);
      return nodePath.join(base, workspaceId);
    };
  }

  /**
   * Each workspace's files once its root is made, by root: a workspace's every request opens them
   * (a thread reply several times), and the mkdir and realpath are two disk calls each. A root
   * removed behind our back answers not found from then on, as the files of an open one do.
   */
  private readonly opened = new Map<string, Promise<NodeWorkspaceFileSystem>>();

  async open(workspaceId: string): Promise<WorkspaceFileSystem> {
    const root = this.rootOf(workspaceId);
    let files = this.opened.get(root);
    if (files === undefined) {
      files = openRoot(root);
      this.opened.set(root, files);
      // A failed open is tried afresh next time.
      files.catch(() => this.opened.delete(root));
    }
    return files;
  }

  async remove(workspaceId: string): Promise<void> {
    const root = this.rootOf(workspaceId);
    this.opened.delete(root);
    await rm(root, { recursive: true, force: true });
  }
}

async function openRoot(root: string): Promise<NodeWorkspaceFileSystem> {
  await mkdir(root, { recursive: true });
  // Every containment check compares real paths, so the root itself is taken real.
  return new NodeWorkspaceFileSystem(await realpath(root));
}

/**
 * The files under one root folder. Every path goes through `locate`: the safe-path rule, then the
 * real path of its deepest existing ancestor, which must stay inside the root; writes go to a
 * temporary file in the same directory, fsynced, renamed over the target, and the directory fsynced.
 */
export class NodeWorkspaceFileSystem implements WorkspaceFileSystem {
  /** `root` must be a real path (no symbolic link in it), as `NodeWorkspaceFileSystems.open` gives. */
  constructor(readonly localRoot: string) {}

  async stat(given: string): Promise<WorkspaceEntry | undefined> {
    const { path, target } = await this.locate(given, 'directory');
    try {
      return entryOf(path, await stat(target));
    } catch (error) {
      if (isMissing(error) || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    }
  }

  async readFile(path: string, range?: FileByteRange): Promise<ReadableStream<Uint8Array>> {
    const { handle, size } = await this.openForReading(path);
    return fileReadStream(handle, range?.start ?? 0, range ? range.end + 1 : size);
  }

  /**
   * The stat and the first FIRST_READ_BYTES read at once (a file that fills them is read on to the
   * size the stat answered), the descriptor closed without waiting: a thread reply reads its
   * thread before calling the vendor, and each round trip to libuv's threads is on that path.
   */
  async readBytes(given: string): Promise<Uint8Array> {
    const { path, handle } = await this.openChecked(given);
    try {
      const first = new Uint8Array(FIRST_READ_BYTES);
      const [info, read] = await Promise.allSettled([handle.stat(), handle.read(first, 0, FIRST_READ_BYTES, 0)]);
      if (info.status === 'rejected') throw info.reason;
      refuseUnlessFile(path, info.value);
      if (read.status === 'rejected') throw read.reason;
      const { bytesRead } = read.value;
      if (bytesRead < FIRST_READ_BYTES) return first.subarray(0, bytesRead);
      return await readBytesOf(handle, Math.max(info.value.size, FIRST_READ_BYTES), first);
    } finally {
      // Nothing is left to fail in closing a descriptor only read from.
      handle.close().catch(() => undefined);
    }
  }

  async writeFile(given: string, content: ReadableStream<Uint8Array> | Uint8Array | string, options: WriteFileOptions = {}): Promise<WrittenEntry> {
    const { maxBytes = Number.POSITIVE_INFINITY, createParents = true, exclusive = false } = options;
    const { path, target, missing, existing } = await this.locateForWrite(given);
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    if (bytes instanceof Uint8Array && bytes.byteLength > maxBytes) throw new WorkspaceFileTooLargeError(maxBytes);
    if (existing?.isDirectory()) throw new WorkspaceConflictError(path, 'a directory is there');
    if (existing && exclusive) throw new WorkspaceConflictError(path, 'a file is already there');
    const directory = nodePath.dirname(target);
    // The parents exist when at most the name itself was missing: no mkdir for the common write.
    if (createParents && missing > 1) await this.makeDirectory(directory, parentPath(path));
    const temp = nodePath.join(directory, TEMP_PREFIX + randomBytes(16).toString('hex'));
    const handle = await open(temp, 'wx').catch(async (error: unknown) => {
      // The parent went away since `locate` (a delete of it meanwhile): made again, as asked;
      // the root, though, is gone with its workspace.
      if (isMissing(error) && directory === this.localRoot) throw new WorkspaceNotFoundError(path);
      if (!(createParents && isMissing(error))) throw fsError(error, parentPath(path));
      await this.makeDirectory(directory, parentPath(path));
      return open(temp, 'wx').catch((again: unknown) => {
        throw fsError(again, parentPath(path));
      });
    });
    let written: Stats;
    try {
      if (bytes instanceof Uint8Array) await writeAll(handle, [bytes], bytes.byteLength);
      else await writeStreamToFile(bytes, handle, { maxBytes, tooLarge: () => new WorkspaceFileTooLargeError(maxBytes) });
      // Size and mtime are final once written (a rename or link keeps them): read beside the fsync.
      [written] = await Promise.all([handle.stat(), handle.sync()]);
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    try {
      // The file is durable: its descriptor is closed while it is moved into place, and a close
      // failing then (its data already synced) does not make a write that landed look failed.
      await Promise.all([handle.close().catch(() => undefined), moveIntoPlace(temp, target, exclusive)]);
    } catch (error) {
      await rm(temp, { force: true });
      throw fsError(error, path);
    }
    return { ...(entryOf(path, written) as WorkspaceEntry), created: existing === undefined };
  }

  async mkdir(given: string): Promise<WorkspaceEntry> {
    const { path, target } = await this.locate(given, 'directory');
    await this.makeDirectory(target, path);
    return entryOf(path, await stat(target)) as WorkspaceEntry;
  }

  async delete(given: string): Promise<void> {
    const { path, target } = await this.locateEntry(given);
    try {
      await lstat(target);
    } catch (error) {
      throw fsError(error, path);
    }
    await rm(target, { recursive: true, force: true });
    await syncDirectory(nodePath.dirname(target));
  }

  async rename(givenFrom: string, givenTo: string): Promise<void> {
    const { path: from, target: source } = await this.locateEntry(givenFrom);
    const { path: to, target: destination } = await this.locateEntry(givenTo);
    try {
      await lstat(source);
    } catch (error) {
      throw fsError(error, from);
    }
    if (destination === source || destination.startsWith(source + nodePath.sep)) {
      throw new WorkspaceConflictError(to, `cannot move '${from}' into itself`);
    }
    // Checked, then renamed: POSIX rename has no "fail if it exists" for directories; two API
    // calls racing to the same new name is the only way one replaces the other (a file) or fails.
    if (await lstat(destination).catch(() => undefined)) throw new WorkspaceConflictError(to, 'something is already there');
    await this.makeDirectory(nodePath.dirname(destination), parentPath(to));
    try {
      await rename(source, destination);
    } catch (error) {
      throw fsError(error, to);
    }
    await syncDirectory(nodePath.dirname(destination));
    if (nodePath.dirname(source) !== nodePath.dirname(destination)) await syncDirectory(nodePath.dirname(source));
  }

  async list(given: string): Promise<WorkspaceEntry[]> {
    const { path, target } = await this.locate(given, 'directory');
    const entries = await this.entriesOf(path, target);
    return entries.sort((a, b) => comparePaths(a.path, b.path));
  }

  async *walk(given: string, { maxDepth }: WalkOptions): AsyncIterable<WorkspaceEntry> {
    const { path, target: start } = await this.locate(given, 'directory');
    if (maxDepth < 1) {
      await this.entriesOf(path, start); // still refuses a missing directory or a file
      return;
    }
    yield* this.walkBelow(path, start, 1, maxDepth);
  }

  glob(pattern: string, options: GlobOptions & { stats: false }): Promise<WorkspacePathEntry[]>;
  glob(pattern: string, options: GlobOptions): Promise<WorkspaceEntry[]>;
  async glob(pattern: string, { maxDepth, directories = true, stats = true }: GlobOptions): Promise<WorkspacePathEntry[]> {
    checkGlobPattern(pattern);
    if (maxDepth < 1 || (await this.baseIsLinked(pattern))) return [];
    const matches = await tinyglobby(pattern, {
      cwd: this.localRoot,
      // tinyglobby counts the root's own entries as depth 0.
      deep: maxDepth - 1,
      dot: GLOB_DOT,
      onlyFiles: !directories,
      expandDirectories: false,
      // fdir then leaves every link out, so no match is reached through one.
      followSymbolicLinks: false,
    });
    const found: WorkspacePathEntry[] = [];
    for (const match of matches) {
      const isDirectory = match.endsWith('/');
      const path = isDirectory ? match.slice(0, -1) : match;
      if (path === '' || path.startsWith('../') || depthOf(path) > maxDepth) continue;
      // Filtered here rather than by an ignore pattern, which `**` would not apply inside dot folders.
      if (path.includes(TEMP_PREFIX) && TEMP_NAME.test(nodePath.posix.basename(path))) continue;
      found.push({ path, type: isDirectory ? 'directory' : 'file' });
    }
    found.sort((a, b) => comparePaths(a.path, b.path));
    return stats ? this.withStats(found) : found;
  }

  /**
   * Whether the pattern's static base (`src/lib` of `src/lib/**`) passes through a link: tinyglobby
   * starts its crawl there and would read a linked directory, where globs skip every link.
   */
  private async baseIsLinked(pattern: string): Promise<boolean> {
    let current = this.localRoot;
    for (const segment of picomatch.scan(pattern).base.split('/')) {
      if (segment === '') continue;
      current = nodePath.join(current, segment);
      const info = await lstat(current).catch(() => undefined);
      if (!info) return false;
      if (info.isSymbolicLink()) return true;
    }
    return false;
  }

  private async withStats(found: WorkspacePathEntry[]): Promise<WorkspaceEntry[]> {
    const entries: (WorkspaceEntry | undefined)[] = new Array(found.length);
    const queue = found.entries();
    const worker = async (): Promise<void> => {
      // The workers share one iterator, so each match is taken by exactly one of them.
      for (const [index, { path }] of queue) {
        const info = await lstat(nodePath.join(this.localRoot, path)).catch(() => undefined);
        // Gone since the crawl, or replaced by a link: left out like any link.
        entries[index] = info && entryOf(path, info);
      }
    };
    await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, found.length) }, worker));
    return entries.filter((entry) => entry !== undefined);
  }

  private async *walkBelow(path: string, directory: string, depth: number, maxDepth: number): AsyncGenerator<WorkspaceEntry> {
    const entries = (await this.entriesOf(path, directory).catch((error: unknown) => {
      // A directory deleted while the walk was on its way to it is no longer below `path`.
      if (error instanceof WorkspaceNotFoundError && depth > 1) return [];
      throw error;
    })).sort((a, b) => comparePaths(a.path, b.path));
    for (const entry of entries) {
      yield entry;
      if (entry.type === 'directory' && depth < maxDepth) {
        yield* this.walkBelow(entry.path, nodePath.join(directory, nodePath.basename(entry.path)), depth + 1, maxDepth);
      }
    }
  }

  /** The entries directly inside `directory` (the real folder of `path`): no link, no temporary file. */
  private async entriesOf(path: string, directory: string): Promise<WorkspaceEntry[]> {
    let dirents: Dirent[];
    try {
      dirents = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      throw fsError(error, path);
    }
    const entries = await Promise.all(
      dirents.map(async (dirent) => {
        if (!dirent.isFile() && !dirent.isDirectory()) return undefined;
        const full = nodePath.join(directory, dirent.name);
        if (TEMP_NAME.test(dirent.name)) {
          await sweepIfStale(full);
          return undefined;
        }
        const info = await lstat(full).catch(() => undefined);
        return info && entryOf(childPath(path, dirent.name), info);
      }),
    );
    return entries.filter((entry) => entry !== undefined);
  }

  /** The file at `given` opened for reading, with its size: refused when it is not a file. */
  private async openForReading(given: string): Promise<{ handle: FileHandle; size: number }> {
    const { path, handle } = await this.openChecked(given);
    try {
      const info = await handle.stat();
      refuseUnlessFile(path, info);
      return { handle, size: info.size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The file at `given` opened for reading where `locate` found it; nothing outside the root is ever opened. */
  private async openChecked(given: string): Promise<{ path: string; handle: FileHandle }> {
    const { path, target } = await this.locate(given, 'entry');
    const handle = await open(target, READ_FLAGS).catch((error: unknown) => {
      throw fsError(error, path);
    });
    return { path, handle };
  }

  /**
   * Creates `directory` (the real folder of `path`) and its parents, fsyncing the parent of the
   * first one created.
   */
  private async makeDirectory(directory: string, path: string): Promise<void> {
    let first: string | undefined;
    try {
      first = await mkdir(directory, { recursive: true });
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST' || code === 'ENOTDIR') throw new WorkspaceConflictError(path, 'a file is where a directory is needed');
      throw error;
    }
    // Nothing created: `directory` is there as a directory (a file there fails the mkdir above).
    if (first !== undefined) await syncDirectory(nodePath.dirname(first));
  }

  /**
   * The one gate of every path: the safe-path rule (`workspacePath`), then the real path of its
   * deepest existing ancestor (itself when it exists) joined with the rest, as `target`. Refuses,
   * touching nothing, a path that leaves the root through a link, passes through a link pointing
   * nowhere, or names a temporary file.
   */
  private async locate(given: string, meaning: 'entry' | 'directory'): Promise<Located> {
    const path = workspacePath(given, meaning);
    // The root ('') is the workspace itself, not a name to refuse.
    if (path !== '') this.refuseOnDisk(path);
    return { path, ...(await this.realTarget(path)) };
  }

  /**
   * `locate` for a write, plus what is at the path now (`existing`, not following a link): the real
   * folder of the parent and a look at the name, at once. A name that is a link is located through
   * it, as `locate` does, and `existing` is then what it points to.
   */
  private async locateForWrite(given: string): Promise<Located & { existing: Stats | undefined }> {
    const path = workspacePath(given, 'entry');
    this.refuseOnDisk(path);
    const [parent, named] = await Promise.all([
      this.realTarget(parentPath(path), path),
      lstat(nodePath.join(this.localRoot, path)).catch((error: unknown) => {
        const code = errorCode(error);
        if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
        throw fsError(error, path);
      }),
    ]);
    if (named?.isSymbolicLink()) {
      const { target, missing } = await this.realTarget(path);
      return { path, target, missing, existing: missing > 0 ? undefined : await lstat(target).catch(() => undefined) };
    }
    const target = nodePath.join(parent.target, nodePath.basename(path));
    return { path, target, missing: named ? 0 : parent.missing + 1, existing: named };
  }

  /** Refuses a path naming a temporary file, or too long for this disk, before anything is looked at. */
  private refuseOnDisk(path: string): void {
    if (path.split('/').some((segment) => TEMP_NAME.test(segment))) {
      throw new WorkspacePathError(path, `names like '${TEMP_PREFIX}…' are reserved for writes in flight: choose another name`);
    }
    if (!fitsOnDisk(path, nodePath.join(this.localRoot, path))) throw new WorkspacePathError(path, 'it is too long for this file system: shorten it');
  }

  /**
   * Where `path` is on disk (see `locate`); errors name `reported`, the path asked about. Every
   * caller has passed `path`, or a path under it, through `refuseOnDisk` already.
   */
  private async realTarget(path: string, reported = path): Promise<{ target: string; missing: number }> {
    if (path === '') return { target: this.localRoot, missing: 0 };
    const rest: string[] = [];
    let candidate = nodePath.join(this.localRoot, path);
    for (;;) {
      let real: string;
      try {
        real = await realpath(candidate);
      } catch (error) {
        const code = errorCode(error);
        // The root itself gone: the workspace was removed while this was open.
        if (candidate === this.localRoot && code === 'ENOENT') throw new WorkspaceNotFoundError(reported);
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw fsError(error, reported);
        if (code === 'ENOENT' && (await lstat(candidate).catch(() => undefined))?.isSymbolicLink()) {
          throw new WorkspacePathError(reported, 'it goes through a symbolic link that points nowhere');
        }
        rest.unshift(nodePath.basename(candidate));
        candidate = nodePath.dirname(candidate);
        continue;
      }
      if (real !== this.localRoot && !real.startsWith(this.localRoot + nodePath.sep)) {
        throw new WorkspacePathError(reported, 'it resolves outside the workspace through a symbolic link');
      }
      return { target: rest.length === 0 ? real : nodePath.join(real, ...rest), missing: rest.length };
    }
  }

  /**
   * Like `locate`, but `target` is where the entry itself is (a link, not what it points to), for
   * `delete` and `rename`; a path through a link leaving the root is refused all the same.
   */
  private async locateEntry(given: string): Promise<{ path: string; target: string }> {
    const { path } = await this.locate(given, 'entry');
    return { path, target: nodePath.join((await this.realTarget(parentPath(path))).target, nodePath.basename(path)) };
  }
}

/** A checked path, where it is on disk, and how many of its last segments do not exist (0: it exists). */
interface Located {
  path: string;
  target: string;
  missing: number;
}

/** Refuses what is not a regular file: a directory (409), anything else (404, as if missing). */
function refuseUnlessFile(path: string, info: Stats): void {
  if (info.isFile()) return;
  throw info.isDirectory() ? new WorkspaceConflictError(path, 'a directory is there, not a file') : new WorkspaceNotFoundError(path);
}

function entryOf(path: string, info: Stats): WorkspaceEntry | undefined {
  if (info.isFile()) return { path, type: 'file', size: info.size, mtime: info.mtime };
  if (info.isDirectory()) return { path, type: 'directory', size: 0, mtime: info.mtime };
  return undefined;
}

/** The port's error for a file-system failure at `path`; anything unexpected passes through. */
function fsError(error: unknown, path: string): unknown {
  switch (errorCode(error)) {
    case 'ENOENT':
      return new WorkspaceNotFoundError(path);
    case 'ENOTDIR':
      return new WorkspaceConflictError(path, 'a file is where a directory is needed');
    case 'EISDIR':
      return new WorkspaceConflictError(path, 'a directory is there');
    case 'EEXIST':
    case 'ENOTEMPTY':
      return new WorkspaceConflictError(path, 'something is already there');
    case 'ELOOP':
      return new WorkspacePathError(path, 'it was replaced by a symbolic link');
    case 'ENAMETOOLONG':
      // The rule bounds the path; the root's own folder adds to it on this disk.
      return new WorkspacePathError(path, 'it is too long for this file system: shorten it');
    default:
      return error;
  }
}

/**
 * Moves a written temporary file to `target` in its directory, durably: `exclusive` fails when
 * something is there (link() fails on an existing name, where rename() would replace it).
 */
async function moveIntoPlace(temp: string, target: string, exclusive: boolean): Promise<void> {
  const moved = exclusive ? link(temp, target).then(() => unlink(temp)) : rename(temp, target);
  // The directory is opened for its sync while the file moves; the fsync follows the move.
  await Promise.all([moved, syncDirectory(nodePath.dirname(target), moved)]);
}

function fitsOnDisk(path: string, absolute: string): boolean {
  if (Buffer.byteLength(absolute) + 1 + TEMP_NAME_BYTES > PATH_MAX_BYTES) return false;
  // Characters are bytes in ASCII; only a path with other characters can have a name over the bound.
  return Buffer.byteLength(path) === path.length || path.split('/').every((segment) => Buffer.byteLength(segment) <= NAME_MAX_BYTES);
}

async function sweepIfStale(full: string): Promise<void> {
  const info = await lstat(full).catch(() => undefined);
  if (info && info.mtimeMs < Date.now() - STALE_TEMP_MS) await rm(full, { force: true });
}
