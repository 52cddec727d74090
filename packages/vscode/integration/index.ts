import Mocha from 'mocha';
import { languageFeatureTests } from './language-features.spec';
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
  languageFeatureTests();
  threadTests();
  workflowTests();
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} integration test(s) failed`)) : resolve()));
  });
}
