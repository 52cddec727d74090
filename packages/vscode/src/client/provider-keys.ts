import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ListProviders, SetProviderCredentials } from '../common/protocol';

/**
 * Provider API keys live in VS Code's SecretStorage, never in settings or files; the language
 * server gets them in memory when it starts and whenever they change.
 */
const secretKey = (provider: string): string => `runloom.provider.${provider}`;

export interface ProviderCredentialsInput {
  provider: string;
  api_key: string;
  base_url?: string;
}

/** Hands every stored key to the server (after it starts). */
export async function sendStoredCredentials(secrets: vscode.SecretStorage, client: LanguageClient): Promise<void> {
  for (const provider of await client.sendRequest(ListProviders.type)) {
    const stored = await secrets.get(secretKey(provider));
    if (stored) await client.sendRequest(SetProviderCredentials.type, { provider, credentials: JSON.parse(stored) as Record<string, string> });
  }
}

/** Stores the key and hands it to the server; asks for each field the arguments leave out. */
export async function setProviderCredentials(secrets: vscode.SecretStorage, client: LanguageClient, input?: ProviderCredentialsInput): Promise<boolean> {
  const provider = input?.provider ?? (await vscode.window.showQuickPick(await client.sendRequest(ListProviders.type), { placeHolder: 'Which model provider?' }));
  if (!provider) return false;
  const apiKey =
    input?.api_key ?? (await vscode.window.showInputBox({ prompt: `API key for ${provider}`, password: true, ignoreFocusOut: true, validateInput: (value) => (value.trim() ? undefined : 'enter the key') }));
  if (!apiKey) return false;
  const baseUrl =
    input
      ? input.base_url
      : await vscode.window.showInputBox({ prompt: `Base URL for ${provider} (optional: a proxy or a compatible server; empty for the vendor's own)`, ignoreFocusOut: true });
  const credentials: Record<string, string> = { api_key: apiKey.trim(), ...(baseUrl ? { base_url: baseUrl.trim() } : {}) };
  await client.sendRequest(SetProviderCredentials.type, { provider, credentials });
  // Usable at once; kept for the next session once the editor's secret store has it. Not awaited:
  // some hosts' stores answer late or never (code-server's web store headless), and the key is
  // already in use.
  secrets.store(secretKey(provider), JSON.stringify(credentials)).then(undefined, (error: unknown) => {
    void vscode.window.showWarningMessage(`The ${provider} key works for this session but could not be saved: ${error instanceof Error ? error.message : String(error)}`);
  });
  return true;
}
