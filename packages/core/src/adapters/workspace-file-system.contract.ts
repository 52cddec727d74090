import { strict as assert } from 'node:assert';
import {
  WorkspaceConflictError,
  type WorkspaceFileSystem,
  type WorkspaceFileSystems,
  WorkspaceFileTooLargeError,
  WorkspaceNotFoundError,
  WorkspacePathError,
} from '../ports/workspace-file-system';
import { patterned, readAll, streamOf } from './blob-store.contract';

export interface WorkspaceFileSystemTestBed {
  systems: WorkspaceFileSystems;
  dispose(): Promise<void>;
  /**
   * For adapters with symbolic links (node-fs): makes `linkPath` inside the workspace a link to a
   * file (content `OUTSIDE_CONTENT`) or a directory (holding `secret.txt`) outside its root, and
   * answers a check that what is outside is as it was.
   */
  linkOutside?(files: WorkspaceFileSystem, linkPath: string, kind: 'file' | 'directory'): Promise<() => void>;
}

/** What the files outside the root hold in the symbolic-link cases. */
export const OUTSIDE_CONTENT = 'outside the workspace';

/**
 * Paths every method refuses with `WorkspacePathError`, touching nothing: climbing out, absolute,
 * backslashes, NUL and control characters, over-long names and paths, and aliases (`.`, `//`).
 */
export const HOSTILE_PATHS: readonly string[] = [
  '..',
  '../x',
  'a/../../x',
  'a/..',
  '/etc/passwd',
  '/',
  'a\\b',
  '..\\x',
  'a\u0000b',
  'a\u0001b',
  'a\nb',
  'a\u007fb',
  'x'.repeat(256),
  `${'abcdefgh/'.repeat(460)}x`,
  '.',
  './a',
  'a/./b',
  'a//b',
];

/**
 * The one contract every `WorkspaceFileSystem` adapter passes (ports/workspace-file-system.ts);
 * adapter test files call `describeWorkspaceFileSystemContract('name', factory)` inside mocha.
 */
export function describeWorkspaceFileSystemContract(name: string, factory: () => Promise<WorkspaceFileSystemTestBed>): void {
  describe(`WorkspaceFileSystem contract: ${name}`, () => {
    let bed: WorkspaceFileSystemTestBed;
    let files: WorkspaceFileSystem;

    beforeEach(async () => {
      bed = await factory();
      files = await bed.systems.open('w-1');
    });
    afterEach(async () => {
      await bed.dispose();
    });

    /** Writes `tree` (path → text; a path ending in `/` is a directory) and answers nothing. */
    async function plant(tree: string[]): Promise<void> {
      for (const path of tree) {
        if (path.endsWith('/')) await files.mkdir(path.slice(0, -1));
        else await files.writeFile(path, `content of ${path}`);
      }
    }

    async function text(path: string): Promise<string> {
      return new TextDecoder().decode(await files.readBytes(path));
    }

    async function walked(path: string, maxDepth: number): Promise<string[]> {
      const paths: string[] = [];
      for await (const entry of files.walk(path, { maxDepth })) paths.push(entry.type === 'directory' ? `${entry.path}/` : entry.path);
      return paths;
    }

    function paths(entries: { path: string; type: string }[]): string[] {
      return entries.map((entry) => (entry.type === 'directory' ? `${entry.path}/` : entry.path));
    }

    describe('round trips', () => {
      it('stores text as UTF-8 and answers the entry it wrote, created', async () => {
        const { created, ...entry } = await files.writeFile('notes/é.txt', 'héllo ✓');
        assert.equal(created, true);
        assert.equal(entry.path, 'notes/é.txt');
        assert.equal(entry.type, 'file');
        assert.equal(entry.size, Buffer.byteLength('héllo ✓'));
        assert.ok(entry.mtime instanceof Date);
        assert.equal(await text('notes/é.txt'), 'héllo ✓');
        assert.deepEqual(await files.stat('notes/é.txt'), entry);
      });

      it('stores bytes, and a stream of many chunks larger than any internal batch, intact', async () => {
        const bytes = patterned(70_000);
        await files.writeFile('b.bin', bytes);
        assert.deepEqual(await files.readBytes('b.bin'), bytes);
        const large = patterned(3 * 1024 * 1024 + 11);
        const entry = await files.writeFile('large.bin', streamOf(large, 50_000));
        assert.equal(entry.size, large.byteLength);
        assert.deepEqual(await readAll(await files.readFile('large.bin')), large);
        assert.deepEqual(await files.readBytes('large.bin'), large);
      });

      it('stores empty content from text, bytes and a stream', async () => {
        await files.writeFile('e1', '');
        await files.writeFile('e2', new Uint8Array(0));
        await files.writeFile('e3', streamOf(new Uint8Array(0), 1));
        for (const path of ['e1', 'e2', 'e3']) {
          assert.equal((await files.stat(path))?.size, 0);
          assert.deepEqual(await readAll(await files.readFile(path)), new Uint8Array(0));
        }
      });

      it('replaces a file on a second write, which did not create it', async () => {
        await files.writeFile('f.txt', 'first, longer content');
        const entry = await files.writeFile('f.txt', 'second');
        assert.equal(entry.created, false);
        assert.equal(entry.size, 6);
        assert.equal(await text('f.txt'), 'second');
      });

      it('keeps a copy of the bytes it was given', async () => {
        const bytes = new Uint8Array([1, 2, 3]);
        await files.writeFile('copy.bin', bytes);
        bytes[0] = 9;
        assert.deepEqual(await files.readBytes('copy.bin'), new Uint8Array([1, 2, 3]));
      });

      it('reads byte ranges, inclusive at both ends', async () => {
        const bytes = patterned(600_000);
        await files.writeFile('r.bin', bytes);
        assert.deepEqual(await readAll(await files.readFile('r.bin', { start: 10, end: 19 })), bytes.subarray(10, 20));
        assert.deepEqual(await readAll(await files.readFile('r.bin', { start: 0, end: 0 })), bytes.subarray(0, 1));
        assert.deepEqual(await readAll(await files.readFile('r.bin', { start: 599_999, end: 599_999 })), bytes.subarray(599_999));
        assert.deepEqual(await readAll(await files.readFile('r.bin', { start: 1, end: 599_999 })), bytes.subarray(1));
      });
    });

    describe('stat, list, walk and glob', () => {
      const tree = ['b.ts', 'a/', 'a/x.ts', 'a/b/', 'a/b/y.ts', 'a/b/c/', 'a/b/c/z.ts', 'a-c.md', 'docs/readme.md', '.runloom/config.yaml', '.hidden.ts'];

      it('stats files, directories and the root; a missing path, or one under a file, is undefined', async () => {
        await plant(tree);
        assert.deepEqual({ ...(await files.stat('a/x.ts')), mtime: undefined }, { path: 'a/x.ts', type: 'file', size: 'content of a/x.ts'.length, mtime: undefined });
        const directory = await files.stat('a/b');
        assert.equal(directory?.type, 'directory');
        assert.equal(directory?.size, 0);
        assert.equal((await files.stat(''))?.type, 'directory');
        assert.equal(await files.stat('nope'), undefined);
        assert.equal(await files.stat('a/nope/deeper'), undefined);
        assert.equal(await files.stat('b.ts/under'), undefined);
      });

      it('lists the entries directly inside a directory, sorted by path, with types, sizes and times', async () => {
        await plant(tree);
        assert.deepEqual(paths(await files.list('')), ['.hidden.ts', '.runloom/', 'a/', 'a-c.md', 'b.ts', 'docs/']);
        const inside = await files.list('a');
        assert.deepEqual(paths(inside), ['a/b/', 'a/x.ts']);
        assert.equal(inside[1]?.size, 'content of a/x.ts'.length);
        assert.ok(inside.every((entry) => entry.mtime instanceof Date));
        assert.deepEqual(await files.list('a/b/c'), [await files.stat('a/b/c/z.ts')]);
        assert.deepEqual(await files.list('a/b/c/'), await files.list('a/b/c'), "a trailing '/' names the same directory");
      });

      it('lists an empty directory as empty, and refuses a missing one or a file', async () => {
        assert.deepEqual(await files.list(''), []);
        await files.mkdir('empty');
        assert.deepEqual(await files.list('empty'), []);
        await files.writeFile('file.txt', 'x');
        await assert.rejects(files.list('missing'), WorkspaceNotFoundError);
        await assert.rejects(files.list('file.txt'), WorkspaceConflictError);
      });

      it('walks depth first, each directory right before its contents, siblings by name, every name included', async () => {
        await plant(tree);
        assert.deepEqual(await walked('', 10), [
          '.hidden.ts',
          '.runloom/',
          '.runloom/config.yaml',
          'a/',
          'a/b/',
          'a/b/c/',
          'a/b/c/z.ts',
          'a/b/y.ts',
          'a/x.ts',
          'a-c.md',
          'b.ts',
          'docs/',
          'docs/readme.md',
        ]);
      });

      it('counts walk depth from 1 for the entries directly inside the directory walked', async () => {
        await plant(tree);
        assert.deepEqual(await walked('', 1), ['.hidden.ts', '.runloom/', 'a/', 'a-c.md', 'b.ts', 'docs/']);
        assert.deepEqual(await walked('a', 1), ['a/b/', 'a/x.ts']);
        assert.deepEqual(await walked('a', 2), ['a/b/', 'a/b/c/', 'a/b/y.ts', 'a/x.ts']);
        assert.deepEqual(await walked('a', 3), ['a/b/', 'a/b/c/', 'a/b/c/z.ts', 'a/b/y.ts', 'a/x.ts']);
        assert.deepEqual(await walked('a', 0), []);
      });

      it('refuses to walk a missing directory or a file', async () => {
        await files.writeFile('file.txt', 'x');
        await assert.rejects(walked('missing', 3), WorkspaceNotFoundError);
        await assert.rejects(walked('file.txt', 3), WorkspaceConflictError);
      });

      it('globs with picomatch syntax, sorted by path, with sizes and times by default', async () => {
        await plant(tree);
        const found = await files.glob('**/*.ts', { maxDepth: 10 });
        assert.deepEqual(paths(found), ['a/b/c/z.ts', 'a/b/y.ts', 'a/x.ts', 'b.ts']);
        assert.equal(found[3]?.size, 'content of b.ts'.length);
        assert.ok(found.every((entry) => entry.mtime instanceof Date));
        assert.deepEqual(paths(await files.glob('a/*', { maxDepth: 10 })), ['a/b/', 'a/x.ts']);
        assert.deepEqual(paths(await files.glob('{b,docs/*}.{ts,md}', { maxDepth: 10 })), ['b.ts', 'docs/readme.md']);
        assert.deepEqual(paths(await files.glob('**/*.md', { maxDepth: 10 })), ['a-c.md', 'docs/readme.md']);
        assert.deepEqual(paths(await files.glob('nothing/**', { maxDepth: 10 })), []);
      });

      it('counts glob depth from 1 at the root', async () => {
        await plant(tree);
        assert.deepEqual(paths(await files.glob('**/*.ts', { maxDepth: 1 })), ['b.ts']);
        assert.deepEqual(paths(await files.glob('**/*.ts', { maxDepth: 2 })), ['a/x.ts', 'b.ts']);
        assert.deepEqual(paths(await files.glob('**/*.ts', { maxDepth: 3 })), ['a/b/y.ts', 'a/x.ts', 'b.ts']);
        assert.deepEqual(paths(await files.glob('a/b/**', { maxDepth: 3 })), ['a/b/', 'a/b/c/', 'a/b/y.ts']);
        assert.deepEqual(paths(await files.glob('**', { maxDepth: 0 })), []);
      });

      it('globs directories too unless told not to, and answers only paths and types without stats', async () => {
        await plant(tree);
        assert.deepEqual(paths(await files.glob('**', { maxDepth: 2 })), ['a/', 'a-c.md', 'a/b/', 'a/x.ts', 'b.ts', 'docs/', 'docs/readme.md']);
        assert.deepEqual(paths(await files.glob('**', { maxDepth: 2, directories: false })), ['a-c.md', 'a/x.ts', 'b.ts', 'docs/readme.md']);
        assert.deepEqual(await files.glob('a/*', { maxDepth: 5, stats: false }), [
          { path: 'a/b', type: 'directory' },
          { path: 'a/x.ts', type: 'file' },
        ]);
      });

      it('leaves names starting with a dot out of * and ** unless the pattern spells the dot', async () => {
        await plant(tree);
        assert.ok(!paths(await files.glob('**', { maxDepth: 10 })).some((path) => path.startsWith('.')));
        assert.deepEqual(paths(await files.glob('.runloom/*.yaml', { maxDepth: 10 })), ['.runloom/config.yaml']);
        assert.deepEqual(paths(await files.glob('.*', { maxDepth: 10 })), ['.hidden.ts', '.runloom/']);
      });
    });

    describe('changes', () => {
      it('renames a file, creating the parents of the new path', async () => {
        await files.writeFile('old.txt', 'moved');
        await files.rename('old.txt', 'new/place/new.txt');
        assert.equal(await files.stat('old.txt'), undefined);
        assert.equal(await text('new/place/new.txt'), 'moved');
      });

      it('renames a directory with everything in it', async () => {
        await plant(['src/', 'src/a.ts', 'src/lib/', 'src/lib/b.ts']);
        await files.rename('src', 'moved/src2');
        assert.equal(await files.stat('src'), undefined);
        assert.deepEqual(await walked('moved', 10), ['moved/src2/', 'moved/src2/a.ts', 'moved/src2/lib/', 'moved/src2/lib/b.ts']);
        assert.equal(await text('moved/src2/lib/b.ts'), 'content of src/lib/b.ts');
      });

      it('refuses a rename onto an existing file or directory, into itself, or from nothing, changing nothing', async () => {
        await plant(['a.txt', 'b.txt', 'd/', 'd/inner.txt']);
        await assert.rejects(files.rename('a.txt', 'b.txt'), WorkspaceConflictError);
        await assert.rejects(files.rename('a.txt', 'd'), WorkspaceConflictError);
        await assert.rejects(files.rename('d', 'b.txt'), WorkspaceConflictError);
        await assert.rejects(files.rename('d', 'd/sub'), WorkspaceConflictError);
        await assert.rejects(files.rename('d', 'd'), WorkspaceConflictError);
        await assert.rejects(files.rename('a.txt', 'b.txt/under'), WorkspaceConflictError);
        await assert.rejects(files.rename('missing', 'x'), WorkspaceNotFoundError);
        assert.deepEqual(await walked('', 10), ['a.txt', 'b.txt', 'd/', 'd/inner.txt']);
        assert.equal(await text('b.txt'), 'content of b.txt');
      });

      it('deletes a file, and a directory with everything in it; a missing path is not found', async () => {
        await plant(['keep.txt', 'd/', 'd/a.txt', 'd/e/', 'd/e/b.txt', 'gone.txt']);
        await files.delete('gone.txt');
        await files.delete('d');
        assert.deepEqual(await walked('', 10), ['keep.txt']);
        await assert.rejects(files.delete('gone.txt'), WorkspaceNotFoundError);
        await assert.rejects(files.delete('d/e'), WorkspaceNotFoundError);
      });

      it('makes directories with their parents; an existing one is fine, a file in the way is a conflict', async () => {
        const entry = await files.mkdir('x/y/z');
        assert.equal(entry.path, 'x/y/z');
        assert.equal(entry.type, 'directory');
        assert.deepEqual(await walked('', 10), ['x/', 'x/y/', 'x/y/z/']);
        assert.equal((await files.mkdir('x/y')).type, 'directory');
        await files.writeFile('f', 'x');
        await assert.rejects(files.mkdir('f'), WorkspaceConflictError);
        await assert.rejects(files.mkdir('f/sub'), WorkspaceConflictError);
        assert.equal((await files.mkdir('')).type, 'directory');
      });

      it('refuses to write over a directory, under a file, or to read a directory as a file', async () => {
        await plant(['d/', 'f.txt']);
        await assert.rejects(files.writeFile('d', 'x'), WorkspaceConflictError);
        await assert.rejects(files.writeFile('f.txt/under', 'x'), WorkspaceConflictError);
        await assert.rejects(files.writeFile('f.txt/under', 'x', { createParents: false }), WorkspaceConflictError);
        await assert.rejects(files.readFile('d'), WorkspaceConflictError);
        await assert.rejects(files.readBytes('d'), WorkspaceConflictError);
        await assert.rejects(files.readBytes('f.txt/under'), WorkspaceConflictError);
        assert.deepEqual(await walked('', 10), ['d/', 'f.txt']);
      });

      it('answers not found for missing files, and for missing parents when told not to create them', async () => {
        await assert.rejects(files.readFile('missing.txt'), WorkspaceNotFoundError);
        await assert.rejects(files.readBytes('a/missing.txt'), WorkspaceNotFoundError);
        await assert.rejects(files.writeFile('no/parent.txt', 'x', { createParents: false }), WorkspaceNotFoundError);
        assert.deepEqual(await files.list(''), []);
        await files.writeFile('top.txt', 'x', { createParents: false });
        assert.equal(await text('top.txt'), 'x');
      });

      it('accepts exactly maxBytes and refuses one byte more, leaving the old content, or no file', async () => {
        await files.writeFile('limit.bin', patterned(1_000), { maxBytes: 1_000 });
        await assert.rejects(files.writeFile('limit.bin', patterned(1_001), { maxBytes: 1_000 }), (error: unknown) => {
          assert.ok(error instanceof WorkspaceFileTooLargeError);
          assert.equal(error.maxBytes, 1_000);
          return true;
        });
        await assert.rejects(files.writeFile('limit.bin', 'x'.repeat(1_001), { maxBytes: 1_000 }), WorkspaceFileTooLargeError);
        let cancelled = false;
        const endless = streamOf(patterned(5_000_000), 64 * 1024, () => {
          cancelled = true;
        });
        await assert.rejects(files.writeFile('limit.bin', endless, { maxBytes: 2_000_000 }), WorkspaceFileTooLargeError);
        assert.ok(cancelled, 'the source was not cancelled');
        assert.deepEqual(await files.readBytes('limit.bin'), patterned(1_000));
        await assert.rejects(files.writeFile('new/too-big.bin', streamOf(patterned(3_000), 500), { maxBytes: 2_999 }), WorkspaceFileTooLargeError);
        // The parent directory may have been made; no file is there, whole or partial.
        assert.deepEqual(await walked('', 10), ['limit.bin', 'new/']);
      });

      it('writes exclusively only where nothing is', async () => {
        await files.writeFile('once.txt', 'first', { exclusive: true });
        await assert.rejects(files.writeFile('once.txt', 'second', { exclusive: true }), WorkspaceConflictError);
        await assert.rejects(files.writeFile('once.txt', streamOf(patterned(10), 3), { exclusive: true }), WorkspaceConflictError);
        assert.equal(await text('once.txt'), 'first');
      });

      it('leaves nothing behind when a streamed write fails midway', async () => {
        await files.writeFile('kept.txt', 'old');
        const failing = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(patterned(100_000));
            controller.error(new Error('connection reset'));
          },
        });
        await assert.rejects(files.writeFile('kept.txt', failing), /connection reset/);
        assert.equal(await text('kept.txt'), 'old');
        assert.deepEqual(await walked('', 10), ['kept.txt']);
      });
    });

    describe('workspaces', () => {
      it('opens the same files again, keeps workspaces apart, and removes one whole', async () => {
        await files.writeFile('a.txt', 'one');
        const again = await bed.systems.open('w-1');
        assert.equal(new TextDecoder().decode(await again.readBytes('a.txt')), 'one');
        const other = await bed.systems.open('w-2');
        assert.deepEqual(await other.list(''), []);
        await bed.systems.remove('w-1');
        await bed.systems.remove('never-opened');
        assert.deepEqual(await (await bed.systems.open('w-1')).list(''), []);
      });
    });

    describe('hostile paths', () => {
      async function refusals(path: string): Promise<[string, () => Promise<unknown>][]> {
        return [
          ['stat', () => files.stat(path)],
          ['readFile', () => files.readFile(path)],
          ['readBytes', () => files.readBytes(path)],
          ['writeFile', () => files.writeFile(path, 'x')],
          ['writeFile (stream)', () => files.writeFile(path, streamOf(patterned(10), 5))],
          ['mkdir', () => files.mkdir(path)],
          ['delete', () => files.delete(path)],
          ['rename from', () => files.rename(path, 'target')],
          ['rename to', () => files.rename('victim.txt', path)],
          ['list', () => files.list(path)],
          ['walk', () => walked(path, 5)],
          ['glob', () => files.glob(path, { maxDepth: 5 })],
        ];
      }

      it('refuses each one on every method with WorkspacePathError, touching nothing', async () => {
        await files.writeFile('victim.txt', 'safe');
        for (const path of HOSTILE_PATHS) {
          for (const [method, call] of await refusals(path)) {
            await assert.rejects(call(), WorkspacePathError, `${method}(${JSON.stringify(path.slice(0, 40))}) was not refused`);
          }
        }
        assert.deepEqual(await walked('', 10), ['victim.txt']);
        assert.equal(await text('victim.txt'), 'safe');
      });

      it('refuses the root where a file is meant, and deleting or renaming it', async () => {
        await files.writeFile('victim.txt', 'safe');
        await assert.rejects(files.readFile(''), WorkspacePathError);
        await assert.rejects(files.readBytes(''), WorkspacePathError);
        await assert.rejects(files.writeFile('', 'x'), WorkspacePathError);
        await assert.rejects(files.delete(''), WorkspacePathError);
        await assert.rejects(files.rename('', 'elsewhere'), WorkspacePathError);
        await assert.rejects(files.rename('victim.txt', ''), WorkspacePathError);
        await assert.rejects(files.glob('', { maxDepth: 5 }), WorkspacePathError);
        assert.deepEqual(await walked('', 10), ['victim.txt']);
      });
    });

    describe('symbolic links out of the root', () => {
      beforeEach(function () {
        // Only adapters that have links can be tricked by them.
        if (!bed.linkOutside) this.skip();
      });

      function linkOutside(linkPath: string, kind: 'file' | 'directory'): Promise<() => void> {
        if (!bed.linkOutside) throw new Error('skipped above');
        return bed.linkOutside(files, linkPath, kind);
      }

      it('refuses reads, writes, listings and renames through a link to a file outside', async () => {
        const unchanged = await linkOutside('escape.txt', 'file');
        await files.writeFile('mine.txt', 'mine');
        await assert.rejects(files.stat('escape.txt'), WorkspacePathError);
        await assert.rejects(files.readFile('escape.txt'), WorkspacePathError);
        await assert.rejects(files.readBytes('escape.txt'), WorkspacePathError);
        await assert.rejects(files.writeFile('escape.txt', 'overwritten'), WorkspacePathError);
        await assert.rejects(files.writeFile('escape.txt', 'overwritten', { exclusive: true }), WorkspacePathError);
        await assert.rejects(files.rename('escape.txt', 'moved.txt'), WorkspacePathError);
        await assert.rejects(files.rename('mine.txt', 'escape.txt'), WorkspacePathError);
        await assert.rejects(files.delete('escape.txt'), WorkspacePathError);
        await assert.rejects(files.list('escape.txt'), WorkspacePathError);
        unchanged();
      });

      it('refuses every path through a link to a directory outside', async () => {
        const unchanged = await linkOutside('sub/escape', 'directory');
        await files.writeFile('mine.txt', 'mine');
        await assert.rejects(files.stat('sub/escape/secret.txt'), WorkspacePathError);
        await assert.rejects(files.readBytes('sub/escape/secret.txt'), WorkspacePathError);
        await assert.rejects(files.readFile('sub/escape/secret.txt'), WorkspacePathError);
        await assert.rejects(files.writeFile('sub/escape/secret.txt', 'overwritten'), WorkspacePathError);
        await assert.rejects(files.writeFile('sub/escape/new/deep.txt', 'planted'), WorkspacePathError);
        await assert.rejects(files.mkdir('sub/escape/new'), WorkspacePathError);
        await assert.rejects(files.list('sub/escape'), WorkspacePathError);
        await assert.rejects(walked('sub/escape', 5), WorkspacePathError);
        await assert.rejects(files.rename('mine.txt', 'sub/escape/mine.txt'), WorkspacePathError);
        await assert.rejects(files.rename('sub/escape/secret.txt', 'stolen.txt'), WorkspacePathError);
        await assert.rejects(files.delete('sub/escape/secret.txt'), WorkspacePathError);
        unchanged();
      });

      it('skips links in listings, walks and globs', async () => {
        await linkOutside('escape.ts', 'file');
        const unchanged = await linkOutside('sub/escape', 'directory');
        await files.writeFile('sub/mine.ts', 'mine');
        assert.deepEqual(paths(await files.list('')), ['sub/']);
        assert.deepEqual(paths(await files.list('sub')), ['sub/mine.ts']);
        assert.deepEqual(await walked('', 10), ['sub/', 'sub/mine.ts']);
        assert.deepEqual(paths(await files.glob('**', { maxDepth: 10 })), ['sub/', 'sub/mine.ts']);
        assert.deepEqual(paths(await files.glob('**/*', { maxDepth: 10, stats: false })), ['sub/', 'sub/mine.ts']);
        assert.deepEqual(paths(await files.glob('sub/escape/*', { maxDepth: 10 })), []);
        assert.deepEqual(paths(await files.glob('**/secret.txt', { maxDepth: 10 })), []);
        unchanged();
      });
    });
  });
}
