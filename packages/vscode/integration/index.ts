import Mocha from 'mocha';
import * as vscode from 'vscode';
import { folderEventTests } from './folder-events.spec';
import { languageFeatureTests } from './language-features.spec';
import { remoteTests } from './remote.spec';
import { threadTests } from './threads.spec';
import { workflowTests } from './workflows.spec';

/**
 * The integration suite, run inside a real VS Code's extension host: the entry `@vscode/test-electron`
 * calls, and so does `test/vscode-extension.test.ts` through code-server. Each spec registers its
 * tests on the given Mocha.
 */
export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  mocha.suite.emit('pre-require', globalThis, 'integration', mocha);
  // The secondary side bar (the editor's own chat) would take a third of every screenshot.
  before(() => vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar'));
  languageFeatureTests();
  threadTests();
  workflowTests();
  folderEventTests();
  // Last: it switches the extension to a remote server.
  remoteTests();
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} integration test(s) failed`)) : resolve()));
  });
}
