import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';

/**
 * The extension host side stays thin (ARCHITECTURE.md, "VS Code"): it starts the Runloom language
 * server over IPC and hands it the editor's documents; everything Runloom knows runs there.
 */
let client: LanguageClient | undefined;

/** The files the language server understands; it is told about these documents only. */
export const RUNLOOM_DOCUMENTS: LanguageClientOptions['documentSelector'] = [
  { scheme: 'file', pattern: '**/*.runnable.{yaml,yml}' },
  { scheme: 'file', pattern: '**/.runloom/workspace-config.runloom.yaml' },
];

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Runloom');
  context.subscriptions.push(output);
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6010'] } },
  };
  client = new LanguageClient('runloom', 'Runloom', serverOptions, { documentSelector: RUNLOOM_DOCUMENTS, outputChannel: output });
  context.subscriptions.push(client);
  // Not awaited: activation returns at once and the server comes up beside the editor.
  client.start().catch((error: unknown) => output.appendLine(`the Runloom language server did not start: ${error instanceof Error ? error.message : String(error)}`));
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
