import type { WorkspaceEntry, WorkspaceFileSystem } from '@runloom/core';

/** A file as the core left it: its size and modification time, or gone. */
type Left = { size: number; mtimeMs: number } | 'deleted';

/**
 * What the core itself did to the open folders' files, path by path. The core publishes its own
 * events for its writes (`file.created`, `thread.updated`, …); the folder watcher sees the same
 * writes on disk and must not report them a second time, so it asks `madeByCore` first.
 */
export class CoreWrites {
  private readonly left = new Map<string, Left>();
  /** Writes under way: the watcher waits for them before comparing. */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  /** `files` with every change it makes remembered (the core's view of a workspace's folder). */
  recording(workspaceId: string, files: WorkspaceFileSystem): WorkspaceFileSystem {
    const remember = async <T>(paths: string[], change: Promise<T>, after: () => Promise<void> | void): Promise<T> => {
      for (const path of paths) this.inFlight.set(keyOf(workspaceId, path), change);
      try {
        const result = await change;
        await after();
        return result;
      } finally {
        for (const path of paths) {
          if (this.inFlight.get(keyOf(workspaceId, path)) === change) this.inFlight.delete(keyOf(workspaceId, path));
        }
      }
    };
    const wrote = (path: string, entry: WorkspaceEntry | undefined): void => {
      this.left.set(keyOf(workspaceId, path), entry ? { size: entry.size, mtimeMs: entry.mtime.getTime() } : 'deleted');
    };
    return {
      localRoot: files.localRoot,
      stat: (path) => files.stat(path),
      readFile: (path, range) => files.readFile(path, range),
      readBytes: (path) => files.readBytes(path),
      list: (path) => files.list(path),
      walk: (path, options) => files.walk(path, options),
      glob: ((pattern: string, options: Parameters<WorkspaceFileSystem['glob']>[1]) => files.glob(pattern, options)) as WorkspaceFileSystem['glob'],
      writeFile: (path, content, options) => {
        const written = files.writeFile(path, content, options);
        return remember([path], written, async () => wrote(path, await written));
      },
      mkdir: (path) => {
        const made = files.mkdir(path);
        return remember([path], made, async () => wrote(path, await made));
      },
      delete: (path) => remember([path], files.delete(path), () => wrote(path, undefined)),
      rename: (from, to) =>
        remember([from, to], files.rename(from, to), async () => {
          wrote(from, undefined);
          wrote(to, await files.stat(to));
        }),
    };
  }

  /**
   * Whether the file at `path` (`undefined`: absent now) is as the core last left it, so a watcher
   * event for it reports the core's own write. Waits for a write to that path still under way.
   */
  async madeByCore(workspaceId: string, path: string, now: () => Promise<{ size: number; mtimeMs: number } | undefined>): Promise<boolean> {
    await this.inFlight.get(keyOf(workspaceId, path))?.catch(() => undefined);
    const left = this.left.get(keyOf(workspaceId, path));
    if (left === undefined) return false;
    const current = await now();
    if (left === 'deleted' || current === undefined) return left === 'deleted' && current === undefined;
    return left.size === current.size && left.mtimeMs === current.mtimeMs;
  }
}

function keyOf(workspaceId: string, path: string): string {
  return `${workspaceId}\0${path}`;
}
