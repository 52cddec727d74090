import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedBackend } from './embedded-backend';
import { EDITOR_ACCOUNT, type EmbeddedRunloom, startEmbeddedRunloom } from './embedded-runloom';
import type { ExecutionUpdate } from './runloom-backend';

/** Every update of an execution until its end. */
async function drain(updates: AsyncIterable<ExecutionUpdate>): Promise<{ output: string; status?: string; error?: string }> {
  let output = '';
  for await (const update of updates) {
    if (update.type === 'output') output += update.text;
    else return { output, status: update.status, error: update.error };
  }
  return { output };
}

/** The core embedded as the language server runs it, on a temporary folder and store. */
describe('EmbeddedBackend (the core in the language server)', function () {
  this.timeout(30_000);
  let folder: string;
  let storage: string;
  let embedded: EmbeddedRunloom;
  let backend: EmbeddedBackend;
  let workspaceId: string;

  beforeEach(async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-folder-'));
    storage = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-storage-'));
    fs.mkdirSync(path.join(folder, '.runloom/commands'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.runloom/commands/hello.yaml'), 'type: shell\nargv: [echo, hi]\n');
    embedded = await startEmbeddedRunloom(storage, [{ path: folder, name: 'project' }], false);
    backend = new EmbeddedBackend(embedded);
    workspaceId = backend.workspaces[0]!.workspaceId;
  });

  afterEach(async () => {
    await backend.close();
    fs.rmSync(folder, { recursive: true, force: true });
    fs.rmSync(storage, { recursive: true, force: true });
  });

  it('publishes what the editor and git change in the folder as file events, once, leaving out the core\'s own writes', async () => {
    const events: { type: string; [field: string]: unknown }[] = [];
    let expected = 0;
    let reached: () => void = () => {};
    const subscription = backend.subscribe(workspaceId, ({ event }) => {
      events.push(event);
      if (events.length === expected) reached();
    });
    const eventsUpTo = (count: number): Promise<void> => {
      expected = count;
      return events.length >= count ? Promise.resolve() : new Promise((resolve) => (reached = resolve));
    };
    const at = (relative: string): string => path.join(folder, relative);
    try {
      // The core writes a file (its own event) and a thread (thread.updated); the watcher sees both on disk.
      await embedded.runloom.workspaceFiles.write(EDITOR_ACCOUNT, workspaceId, 'by-core.txt', 'core');
      const thread = await backend.createThread(workspaceId, 'a thread');
      await eventsUpTo(2);
      // The editor saves a file, edits it, git renames it (delete + create), a folder comes and goes.
      fs.writeFileSync(at('notes.md'), 'draft');
      fs.mkdirSync(at('docs'));
      const gitTemp = at('.runloom-tmp-0123456789abcdef0123456789abcdef');
      await backend.filesChanged([
        { path: at('by-core.txt'), kind: 'created' },
        { path: at(`.runloom/threads/${thread.threadId}.json`), kind: 'changed' },
        { path: gitTemp, kind: 'created' },
        { path: at('.git/index'), kind: 'changed' },
        { path: at('notes.md'), kind: 'created' },
        { path: at('docs'), kind: 'created' },
      ]);
      fs.writeFileSync(at('notes.md'), 'final text');
      await backend.filesChanged([{ path: at('notes.md'), kind: 'changed' }]);
      fs.renameSync(at('notes.md'), at('renamed.md'));
      fs.rmdirSync(at('docs'));
      await backend.filesChanged([
        { path: at('notes.md'), kind: 'deleted' },
        { path: at('renamed.md'), kind: 'created' },
        { path: at('docs'), kind: 'deleted' },
      ]);
      // git brings a folder with a file in it; the watcher reports the folder, then (maybe) the file.
      fs.mkdirSync(at('lib'));
      fs.writeFileSync(at('lib/index.ts'), 'export {};');
      await backend.filesChanged([{ path: at('lib'), kind: 'created' }]);
      await backend.filesChanged([{ path: at('lib/index.ts'), kind: 'created' }]);
      // Events come in order: once this one is in, a repeat of any before it would be too.
      fs.writeFileSync(at('last.txt'), 'end');
      await backend.filesChanged([{ path: at('last.txt'), kind: 'created' }]);
      await eventsUpTo(11);
      assert.deepEqual(
        events.map(({ type, path: changed, size }) => ({ type, path: changed ?? null, size: size ?? null })),
        [
          { type: 'file.created', path: 'by-core.txt', size: 4 },
          { type: 'thread.updated', path: null, size: null },
          { type: 'file.created', path: 'notes.md', size: 5 },
          { type: 'directory.created', path: 'docs', size: null },
          { type: 'file.updated', path: 'notes.md', size: 10 },
          { type: 'file.deleted', path: 'notes.md', size: null },
          { type: 'file.created', path: 'renamed.md', size: 10 },
          { type: 'directory.deleted', path: 'docs', size: null },
          { type: 'directory.created', path: 'lib', size: null },
          { type: 'file.created', path: 'lib/index.ts', size: 10 },
          { type: 'file.created', path: 'last.txt', size: 3 },
        ],
      );
    } finally {
      subscription.unsubscribe();
    }
  });

  it('runs shell commands only while the editor allows them (the setting, in a trusted workspace)', async () => {
    await assert.rejects(backend.executeCommand(workspaceId, 'hello', []), /runloom.commands.allowShell/);
    backend.setShellCommands(true);
    const { updates } = await backend.executeCommand(workspaceId, 'hello', []);
    assert.deepEqual(await drain(updates), { output: 'hi\n', status: 'succeeded', error: undefined });
    backend.setShellCommands(false);
    await assert.rejects(backend.executeCommand(workspaceId, 'hello', []), /runloom.commands.allowShell/);
  });
});
