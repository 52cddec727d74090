import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crashContent } from '../../../test-support/workspace-write-crash-child';
import { WorkspaceNotFoundError, WorkspacePathError } from '../../ports/workspace-file-system';
import { readAll, streamOf } from '../blob-store.contract';
import { describeWorkspaceFileSystemContract, OUTSIDE_CONTENT } from '../workspace-file-system.contract';
import { NodeWorkspaceFileSystems } from './node-workspace-file-system';

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-workspaces-'));
}

describeWorkspaceFileSystemContract('node-fs', async () => {
  const dir = scratch();
  const outside = path.join(dir, 'outside');
  return {
    systems: new NodeWorkspaceFileSystems(path.join(dir, 'workspaces')),
    dispose: async () => fs.rmSync(dir, { recursive: true, force: true }),
    async linkOutside(files, linkPath, kind) {
      fs.mkdirSync(outside, { recursive: true });
      const secretFile = path.join(outside, 'secret.txt');
      fs.writeFileSync(secretFile, OUTSIDE_CONTENT);
      const link = path.join(files.localRoot as string, linkPath);
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(kind === 'file' ? secretFile : outside, link);
      return () => {
        assert.deepEqual(fs.readdirSync(outside), ['secret.txt']);
        assert.equal(fs.readFileSync(secretFile, 'utf8'), OUTSIDE_CONTENT);
      };
    },
  };
});

describe('NodeWorkspaceFileSystems', () => {
  let dir: string;
  let systems: NodeWorkspaceFileSystems;
  beforeEach(() => {
    dir = scratch();
    systems = new NodeWorkspaceFileSystems(path.join(dir, 'workspaces'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps each workspace in the folder <base>/<id>, given as localRoot', async () => {
    const files = await systems.open('w-1');
    assert.equal(files.localRoot, fs.realpathSync(path.join(dir, 'workspaces', 'w-1')));
    await files.writeFile('src/a.ts', 'export {};');
    assert.equal(fs.readFileSync(path.join(dir, 'workspaces', 'w-1', 'src', 'a.ts'), 'utf8'), 'export {};');
  });

  it('roots a workspace wherever the function given answers (an editor’s open folder)', async () => {
    const folder = path.join(dir, 'my-project');
    const rooted = new NodeWorkspaceFileSystems(() => folder);
    const files = await rooted.open('anything');
    assert.equal(files.localRoot, fs.realpathSync(folder));
    await files.writeFile('README.md', '# hi');
    assert.equal(fs.readFileSync(path.join(folder, 'README.md'), 'utf8'), '# hi');
  });

  it('refuses a workspace id that is not one safe folder name', async () => {
    for (const id of ['..', '../x', 'a/b', '', 'a\\b']) await assert.rejects(systems.open(id), WorkspacePathError, id);
    await assert.rejects(systems.remove('..'), WorkspacePathError);
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('follows a link that stays inside the root for reads and writes, skips it in listings; delete removes the link itself', async () => {
    const files = await systems.open('w');
    await files.writeFile('real/target.txt', 'inside');
    fs.symlinkSync(path.join(files.localRoot as string, 'real'), path.join(files.localRoot as string, 'alias'));
    assert.equal(new TextDecoder().decode(await files.readBytes('alias/target.txt')), 'inside');
    await files.writeFile('alias/written.txt', 'through the link');
    assert.equal(fs.readFileSync(path.join(files.localRoot as string, 'real', 'written.txt'), 'utf8'), 'through the link');
    assert.deepEqual((await files.list('')).map((entry) => entry.path), ['real']);
    assert.deepEqual(await files.glob('alias/*', { maxDepth: 5 }), []);
    assert.deepEqual((await files.glob('**/*.txt', { maxDepth: 5, stats: false })).map((entry) => entry.path), ['real/target.txt', 'real/written.txt']);
    await files.delete('alias');
    assert.deepEqual((await files.list('real')).map((entry) => entry.path), ['real/target.txt', 'real/written.txt']);
  });

  it('refuses a path through a link pointing nowhere, and writes nothing where it points', async () => {
    const files = await systems.open('w');
    const target = path.join(dir, 'planted.txt');
    fs.symlinkSync(target, path.join(files.localRoot as string, 'dangling'));
    await assert.rejects(files.writeFile('dangling', 'x'), WorkspacePathError);
    await assert.rejects(files.stat('dangling'), WorkspacePathError);
    assert.equal(fs.existsSync(target), false);
  });

  it('refuses a path the rule allows but the disk cannot hold beside the root, creating nothing', async () => {
    const files = await systems.open('w');
    const long = `${`${'d'.repeat(200)}/`.repeat(20)}${'f'.repeat(70)}`;
    await assert.rejects(files.writeFile(long, 'x'), WorkspacePathError);
    await assert.rejects(files.mkdir(long), WorkspacePathError);
    // 255 characters, 510 bytes in UTF-8: a name no Linux file system holds.
    await assert.rejects(files.mkdir(`a/${'é'.repeat(255)}/b`), WorkspacePathError);
    assert.deepEqual(await files.list(''), []);
  });

  it('refuses to read a FIFO as not found, without waiting for a writer', async function () {
    if (process.platform === 'win32') this.skip();
    const files = await systems.open('w');
    const fifo = path.join(files.localRoot as string, 'pipe.json');
    await new Promise<void>((resolve, reject) =>
      spawn('mkfifo', [fifo], { stdio: 'ignore' }).on('error', reject).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo exited with ${code}`)))),
    );
    await assert.rejects(files.readBytes('pipe.json'), WorkspaceNotFoundError);
    await assert.rejects(files.readFile('pipe.json'), WorkspaceNotFoundError);
  });

  it('answers not found once the workspace was removed under an open handle', async () => {
    const files = await systems.open('w');
    await files.writeFile('a.txt', 'x');
    await systems.remove('w');
    await assert.rejects(files.readBytes('a.txt'), WorkspaceNotFoundError);
    await assert.rejects(files.list(''), WorkspaceNotFoundError);
  });

  describe('temporary files', () => {
    it('leaves none behind, and hides one in flight from list, walk and glob', async () => {
      const files = await systems.open('w');
      await files.writeFile('d/a.txt', 'a');
      const inFlight = path.join(files.localRoot as string, 'd', `.runloom-tmp-${'0'.repeat(32)}`);
      fs.writeFileSync(inFlight, 'half');
      assert.deepEqual((await files.list('d')).map((entry) => entry.path), ['d/a.txt']);
      const walked: string[] = [];
      for await (const entry of files.walk('', { maxDepth: 5 })) walked.push(entry.path);
      assert.deepEqual(walked, ['d', 'd/a.txt']);
      assert.deepEqual((await files.glob('**/.*', { maxDepth: 5 })).map((entry) => entry.path), []);
      assert.ok(fs.existsSync(inFlight), 'a recent one may belong to a write in flight');
      fs.rmSync(inFlight);
      assert.deepEqual(fs.readdirSync(path.join(files.localRoot as string, 'd')), ['a.txt']);
    });

    it('sweeps one a crash left over an hour ago when a listing meets it', async () => {
      const files = await systems.open('w');
      const stale = path.join(files.localRoot as string, `.runloom-tmp-${'a'.repeat(32)}`);
      fs.writeFileSync(stale, 'half');
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
      fs.utimesSync(stale, twoHoursAgo, twoHoursAgo);
      assert.deepEqual(await files.list(''), []);
      assert.equal(fs.existsSync(stale), false);
    });

    it('reserves their names', async () => {
      const files = await systems.open('w');
      await assert.rejects(files.writeFile(`.runloom-tmp-${'b'.repeat(32)}`, 'x'), WorkspacePathError);
      await assert.rejects(files.readBytes(`d/.runloom-tmp-${'b'.repeat(32)}`), WorkspacePathError);
      await files.writeFile('.runloom-tmp-notes.txt', 'not the pattern');
    });
  });

  describe('durability', function () {
    // A child process starting under tsx, and hundreds of fsyncs, on a loaded machine.
    this.timeout(60_000);

    it('finds every acknowledged write whole after the writing process is killed with SIGKILL', async () => {
      const base = path.join(dir, 'workspaces');
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../../test-support/workspace-write-crash-child.ts'), base], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const acknowledged: number[] = [];
      let partial = '';
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      // 'close' comes after the child's output is fully read, so no acknowledged write is left unread.
      const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          const lines = (partial + chunk.toString()).split('\n');
          partial = lines.pop() ?? '';
          acknowledged.push(...lines.map(Number));
          if (acknowledged.length >= 200) {
            // Right after a write resolved, with three more in flight.
            child.kill('SIGKILL');
            resolve();
          }
        });
        child.on('exit', () => reject(new Error(`child exited before it was killed: ${stderr}`)));
      });
      assert.equal(await closed, 'SIGKILL');
      acknowledged.push(...partial.split('\n').filter((line) => line.length > 0).map(Number));

      const files = await new NodeWorkspaceFileSystems(base).open('crash');
      for (const n of acknowledged) {
        assert.deepEqual(await files.readBytes(`d-${n % 5}/f-${n}.bin`), crashContent(n), `file ${n}`);
      }
      // Whatever else is visible (a write that finished without being acknowledged) is whole too.
      for (const entry of await files.glob('**/*.bin', { maxDepth: 2 })) {
        const n = Number(/f-(\d+)\.bin$/.exec(entry.path)?.[1]);
        assert.deepEqual(await files.readBytes(entry.path), crashContent(n), entry.path);
      }
    });

    it('never shows a reader part of a file while large writes replace it', async () => {
      const files = await systems.open('w');
      const size = 4 * 1024 * 1024;
      const version = (v: number): Uint8Array => new Uint8Array(size).fill(v);
      await files.writeFile('big.bin', version(0));
      let writing = true;
      const writer = (async () => {
        for (let v = 1; v <= 12; v += 1) await files.writeFile('big.bin', v % 2 === 0 ? version(v) : streamOf(version(v), 256 * 1024));
        writing = false;
      })();
      let reads = 0;
      const seen = new Set<number>();
      while (writing || reads < 2) {
        const content = reads % 2 === 0 ? await files.readBytes('big.bin') : await readAll(await files.readFile('big.bin'));
        assert.equal(content.byteLength, size);
        const first = content[0] as number;
        assert.ok(content.every((byte) => byte === first), `read ${reads} mixes versions`);
        seen.add(first);
        reads += 1;
      }
      await writer;
      assert.ok(seen.size >= 2, 'the reads saw a single version: the test proved nothing');
      assert.deepEqual(await files.readBytes('big.bin'), version(12));
    });

  });
});
