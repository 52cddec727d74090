import * as vscode from 'vscode';

/** Activation entry point; the workspace views arrive with the extension's own issue. */
export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Runloom');
  context.subscriptions.push(output);
  output.appendLine(`Runloom active for ${vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? 'no folder'}`);
}

export function deactivate(): void {}
