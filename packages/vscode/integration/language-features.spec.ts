import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { screenshot } from './screenshots';

/** Runloom diagnostics on this document, once the language server has published some. */
function runloomDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((diagnostic) => diagnostic.source?.startsWith('Runloom'));
}

/** Resolves with the document's Runloom diagnostics the first time `accept` holds for them. */
function diagnosticsWhen(uri: vscode.Uri, accept: (diagnostics: vscode.Diagnostic[]) => boolean): Promise<vscode.Diagnostic[]> {
  return new Promise((resolve) => {
    const check = (): boolean => {
      const diagnostics = runloomDiagnostics(uri);
      if (!accept(diagnostics)) return false;
      subscription.dispose();
      resolve(diagnostics);
      return true;
    };
    const subscription = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((changed) => changed.toString() === uri.toString())) check();
    });
    check();
  });
}

function fixture(name: string): vscode.Uri {
  return vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0]!.uri, name);
}

export function languageFeatureTests(): void {
  describe('Runloom files in the editor', () => {
    it('shows a broken runnable configuration\'s problem where it is, and clears it once fixed', async () => {
      const uri = fixture('broken.runnable.yaml');
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document);
      const [problem] = await diagnosticsWhen(uri, (diagnostics) => diagnostics.length > 0);
      assert.match(problem!.message, /^llms\.0\.model: /);
      assert.equal(problem!.severity, vscode.DiagnosticSeverity.Error);
      assert.equal(problem!.range.start.line, 6, 'on the llm that lacks a model');
      await screenshot('diagnostics');

      const edit = new vscode.WorkspaceEdit();
      edit.insert(uri, new vscode.Position(7, 0), '    model: gpt-4o\n');
      assert.equal(await vscode.workspace.applyEdit(edit), true);
      await diagnosticsWhen(uri, (diagnostics) => diagnostics.length === 0);
    });

    it('completes provider names from the schema the server validates with', async () => {
      const uri = fixture('broken.runnable.yaml');
      const document = await vscode.workspace.openTextDocument(uri);
      const line = document.lineAt(6).text;
      const afterKey = new vscode.Position(6, line.indexOf('provider: ') + 'provider: '.length);
      const list = await vscode.commands.executeCommand<vscode.CompletionList>('vscode.executeCompletionItemProvider', uri, afterKey);
      const labels = list.items.map((item) => (typeof item.label === 'string' ? item.label : item.label.label));
      for (const provider of ['openai', 'anthropic', 'aws-bedrock']) assert.ok(labels.includes(provider), `${provider} in ${labels.join(', ')}`);
    });

    it('explains workspace configuration keys on hover', async () => {
      const uri = fixture('.runloom/workspace-config.runloom.yaml');
      await vscode.workspace.openTextDocument(uri);
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, new vscode.Position(3, 6));
      const text = hovers.flatMap((hover) => hover.contents.map((content) => (typeof content === 'string' ? content : content.value))).join('\n');
      assert.match(text, /models\.default\.provider/);
      assert.match(text, /`anthropic`/);
    });
  });
}
