import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RunloomExtensionApi } from '../src/client/extension';
import type { ProcessRunItem } from '../src/common/protocol';
import { screenshot } from './screenshots';
import { COMMAND_REPLY } from './vendor-script';

async function extensionApi(): Promise<RunloomExtensionApi> {
  const extension = vscode.extensions.getExtension<RunloomExtensionApi>('runloom.runloom-vscode');
  assert.ok(extension, 'the Runloom extension is installed');
  return extension.activate();
}

function fixture(name: string): vscode.Uri {
  return vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, name);
}

/** Resolves once the view's run of `runId` satisfies `accept` (the view refreshes on the core's events). */
function runWhen(api: RunloomExtensionApi, runId: string, accept: (run: ProcessRunItem) => boolean): Promise<ProcessRunItem> {
  return new Promise((resolve) => {
    const check = async (): Promise<boolean> => {
      const run = (await api.processRunsView.runs()).find((candidate) => candidate.runId === runId);
      if (!run || !accept(run)) return false;
      subscription.dispose();
      resolve(run);
      return true;
    };
    const subscription = api.processRunsView.onDidChangeTreeData(() => void check());
    void check();
  });
}

export function workflowTests(): void {
  describe('Commands and process runs views', () => {
    let api: RunloomExtensionApi;
    before(async () => {
      api = await extensionApi();
      await api.ready;
    });

    it('lists the folder\'s command files by category and streams a run\'s output into the output channel', async () => {
      const categories = await api.commandsView.getChildren();
      assert.deepEqual(categories.map((node) => api.commandsView.getTreeItem(node).label), ['tools', 'writing']);
      const [greet] = await api.commandsView.getChildren(categories[1]);
      assert.equal(api.commandsView.getTreeItem(greet!).label, 'greet');
      await vscode.commands.executeCommand('runloom.commands.focus');
      const runId = await vscode.commands.executeCommand<string>('runloom.runCommand', greet, ['Ada']);
      assert.deepEqual(await api.commandsView.ended(runId), { status: 'succeeded', text: COMMAND_REPLY });
      await screenshot('commands-view');
    });

    it('runs a shell command only once runloom.commands.allowShell is on (this workspace is trusted)', async () => {
      const [tools] = await api.commandsView.getChildren();
      const [shout] = await api.commandsView.getChildren(tools);
      assert.equal(api.commandsView.getTreeItem(shout!).label, 'shout');
      await assert.rejects(Promise.resolve(vscode.commands.executeCommand('runloom.runCommand', shout, ['loudly'])), /runloom.commands.allowShell/);
      const settings = vscode.workspace.getConfiguration('runloom');
      // The extension hears the change first (it registered earlier), so the server knows before the run.
      const changed = new Promise<void>((resolve) => {
        const subscription = vscode.workspace.onDidChangeConfiguration((change) => {
          if (!change.affectsConfiguration('runloom.commands.allowShell')) return;
          subscription.dispose();
          resolve();
        });
      });
      await settings.update('commands.allowShell', true, vscode.ConfigurationTarget.Global);
      await changed;
      try {
        const runId = await vscode.commands.executeCommand<string>('runloom.runCommand', shout, ['loudly']);
        assert.deepEqual(await api.commandsView.ended(runId), { status: 'succeeded', text: 'shouted loudly\n' });
      } finally {
        await settings.update('commands.allowShell', undefined, vscode.ConfigurationTarget.Global);
      }
    });

    it('runs a process file, shows it waiting on its approval, approves it in the tree and sees it complete', async () => {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(fixture('release.process.yaml')));
      const started = await vscode.commands.executeCommand<ProcessRunItem>('runloom.runProcessFile');
      assert.equal(started.processId, 'release');
      const waiting = await runWhen(api, started.runId, (run) => run.status === 'waiting_approval');
      assert.deepEqual(
        waiting.phases.map((phase) => [phase.id, phase.status, phase.tasks.map((task) => task.status)]),
        [
          ['prepare', 'succeeded', ['succeeded']],
          ['ship', 'running', ['waiting_approval']],
        ],
      );
      // The task node as the tree shows it, with the approve action its state offers.
      const [runNode] = (await api.processRunsView.getChildren()).filter((node) => api.processRunsView.getTreeItem(node).id === started.runId);
      const shipPhase = (await api.processRunsView.getChildren(runNode))[1]!;
      const [signOff] = await api.processRunsView.getChildren(shipPhase);
      assert.equal(api.processRunsView.getTreeItem(signOff!).contextValue, 'runloom.task.waiting_approval');
      await screenshot('process-runs-waiting');
      await vscode.commands.executeCommand('runloom.process.approve', signOff);
      const finished = await runWhen(api, started.runId, (run) => run.status === 'succeeded');
      assert.deepEqual(finished.phases[1]!.tasks.map((task) => task.status), ['succeeded']);
      await screenshot('process-runs-done');
    });
  });
}
