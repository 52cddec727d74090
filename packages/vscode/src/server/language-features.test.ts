import assert from 'node:assert/strict';
import { parseRunnableConfig } from '@runloom/core';
import { completionsAt, diagnosticsOf, hoverAt, kindOf } from './language-features';
import { runloomFileKinds } from './runloom-file-kinds';
import { yamlContextAt } from './yaml-context';

const runnable = kindOf(runloomFileKinds, '/work/folder/summarise.runnable.yaml')!;
const workspaceConfig = kindOf(runloomFileKinds, '/work/folder/.runloom/workspace-config.runloom.yaml')!;
const processSpec = kindOf(runloomFileKinds, '/work/folder/release.process.yaml')!;
const command = kindOf(runloomFileKinds, '/work/folder/.runloom/commands/summarize.yaml')!;

/** The 0-based position just after the last character of `marker` in `text`. */
function after(text: string, marker: string): { line: number; character: number } {
  const offset = text.indexOf(marker) + marker.length;
  const lines = text.slice(0, offset).split('\n');
  return { line: lines.length - 1, character: lines[lines.length - 1]!.length };
}

describe('editor language features for Runloom files', () => {
  it('knows which files are Runloom files', () => {
    assert.equal(runnable.label, 'runnable configuration');
    assert.equal(workspaceConfig.label, 'workspace configuration');
    assert.equal(processSpec.label, 'process specification');
    assert.equal(command.label, 'command');
    assert.equal(kindOf(runloomFileKinds, '/work/folder/docker-compose.yaml'), undefined);
    assert.equal(kindOf(runloomFileKinds, '/work/folder/commands/summarize.yaml'), undefined);
  });

  it('reports a runnable configuration problem with the message and path the HTTP API gives, at its line', () => {
    const text = 'name: summarise\ntype: prompt\nprompt:\n  system: Summarise.\nllms:\n  - provider: openai\n';
    const expected = parseRunnableConfig(text).diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    assert.ok(expected.length > 0, 'the fixture is invalid for the API too');
    const diagnostics = diagnosticsOf(runnable, text);
    assert.deepEqual(
      diagnostics.map((diagnostic) => diagnostic.message),
      parseRunnableConfig(text).diagnostics.map((diagnostic) => `${diagnostic.path}: ${diagnostic.message}`),
    );
    const model = diagnostics.find((diagnostic) => diagnostic.message.startsWith('llms.0.model'))!;
    assert.equal(model.range.start.line, 5, 'on the line of the llm missing its model');
    assert.equal(model.severity, 'error');
    assert.deepEqual(diagnosticsOf(runnable, text.replace('provider: openai', 'provider: openai\n    model: gpt-4o')), []);
  });

  it('locates YAML syntax errors of the workspace configuration', () => {
    const diagnostics = diagnosticsOf(workspaceConfig, 'models:\n  default: [unclosed\n');
    assert.equal(diagnostics.length, 1);
    assert.ok(diagnostics[0]!.range.start.line >= 1, `line ${diagnostics[0]!.range.start.line}`);
    const wrongProvider = diagnosticsOf(workspaceConfig, 'models:\n  default:\n    provider: acme\n    model: m\n');
    assert.equal(wrongProvider.length, 1);
    assert.match(wrongProvider[0]!.message, /^models\.default\.provider: /);
    assert.equal(wrongProvider[0]!.range.start.line, 2);
  });

  it('completes the keys of the mapping under the cursor, required first, leaving out those already written', () => {
    const text = 'name: x\nllms:\n  - model: gpt-4o\n    \n';
    const labels = completionsAt(runnable, text, 3, 4).map((completion) => completion.label);
    assert.ok(labels.includes('provider') && labels.includes('params') && labels.includes('is_default'), labels.join(', '));
    assert.ok(!labels.includes('model'), 'model is already there');
    const root = completionsAt(runnable, 'name: x\n', 1, 0);
    assert.ok(root.some((completion) => completion.label === 'prompt' && completion.insertText === 'prompt: '));
    assert.ok(!root.some((completion) => completion.label === 'name'));
  });

  it('completes enum values: providers, message roles, runnable types', () => {
    const providers = 'llms:\n  - model: m\n    provider: ';
    assert.deepEqual(
      completionsAt(runnable, providers, 2, after(providers, 'provider: ').character).map((completion) => completion.label),
      ['openai', 'anthropic', 'google', 'azure-openai', 'mistral', 'aws-bedrock', 'groq'],
    );
    const role = 'prompt:\n  messages:\n    - role: a';
    assert.deepEqual(completionsAt(runnable, role, 2, after(role, 'role: a').character).map((completion) => completion.label), ['assistant']);
    const config = 'models:\n  default:\n    provider: g';
    assert.deepEqual(completionsAt(workspaceConfig, config, 2, after(config, ': g').character).map((completion) => completion.label), ['google', 'groq']);
  });

  it('explains a key on hover from the schema: its documentation and accepted values', () => {
    const text = 'models:\n  default:\n    provider: openai\n    model: gpt-4o\n';
    const provider = hoverAt(workspaceConfig, text, 2, 6)!;
    assert.match(provider, /\*\*models\.default\.provider\*\*/);
    assert.match(provider, /one of the seven provider names/);
    assert.match(provider, /`anthropic`/);
    assert.match(hoverAt(workspaceConfig, text, 1, 4)!, /the model used when a request/);
    assert.equal(hoverAt(workspaceConfig, text, 2, 20), undefined, 'not on the value');
  });

  it('reads the cursor context of broken, half-typed YAML from its indentation', () => {
    const text = 'inputs:\n  - name: a\n    metadata:\n      sch';
    assert.deepEqual(yamlContextAt(text, 3, 9), { path: ['inputs', 0, 'metadata'], kind: 'key', prefix: 'sch' });
    assert.deepEqual(yamlContextAt('a: 1 # comment', 0, 14), undefined);
  });

  it('reports a process specification problem as creating a run would, located at its task', () => {
    const text = 'name: release\nphases:\n  - id: gate\n    name: Gate\n    tasks:\n      - id: ship\n        name: Ship\n        type: deploy\n';
    const diagnostics = diagnosticsOf(processSpec, text);
    assert.equal(diagnostics.length, 1);
    assert.match(diagnostics[0]!.message, /^phases\.0\.tasks\.0\.type: must be one of prompt, command, runnable, approval, wait/);
    assert.equal(diagnostics[0]!.range.start.line, 7);
    const cycle = 'name: r\nphases:\n  - id: p\n    name: P\n    tasks:\n      - {id: a, name: A, type: wait, needs: [b], input: {seconds: 1}}\n      - {id: b, name: B, type: wait, needs: [a], input: {seconds: 1}}\n';
    assert.match(diagnosticsOf(processSpec, cycle).map((diagnostic) => diagnostic.message).join('\n'), /cycle/);
    const fixed = text.replace('type: deploy', 'type: approval\n        input: {message: Ship it?}');
    assert.deepEqual(diagnosticsOf(processSpec, fixed), []);
    assert.deepEqual(
      completionsAt(processSpec, text, 7, 20).map((completion) => completion.label),
      [],
      'no value starts with the typed "deploy"',
    );
    assert.ok(completionsAt(processSpec, 'phases:\n  - tasks:\n      - type: ', 2, 14).some((completion) => completion.label === 'approval'));
  });

  it('checks a command file as creating the command would', () => {
    assert.deepEqual(diagnosticsOf(command, 'type: prompt\ntemplate: Summarize {{text}}\nargs:\n  - name: text\n    required: true\n'), []);
    const missing = diagnosticsOf(command, 'type: prompt\ntemplate: Summarize {{text}}\n');
    assert.equal(missing.length, 1);
    assert.match(missing[0]!.message, /^template: the template names undeclared args: text/);
    assert.equal(missing[0]!.range.start.line, 1);
  });
});
