import * as vscode from 'vscode';
import type { InitializationOptions, RemoteServer } from '../common/protocol';

/** The remote server's client secret: in SecretStorage, never in the settings. */
const CLIENT_SECRET_KEY = 'runloom.remote.clientSecret';

/**
 * What the language server is started with: the embedded core, or a remote `runloom serve` when
 * `runloom.remote.url` is set (its client id from the settings, its secret from SecretStorage); and
 * whether shell commands may run — `runloom.commands.allowShell`, honoured only in a trusted
 * workspace (restricted mode keeps them off whatever the settings say).
 */
export class ServerSettings {
  private loaded: RemoteServer | undefined;
  /** The secret set in this session: usable before (and whether or not) the secret store keeps it. */
  private sessionSecret: string | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {}

  /** The remote server in use, as of the last `load`. */
  get remote(): RemoteServer | undefined {
    return this.loaded;
  }

  get shellCommands(): boolean {
    return vscode.workspace.isTrusted && vscode.workspace.getConfiguration('runloom').get<boolean>('commands.allowShell', false);
  }

  get initializationOptions(): InitializationOptions {
    return { storagePath: this.context.globalStorageUri.fsPath, shellCommands: this.shellCommands, ...(this.loaded ? { remote: this.loaded } : {}) };
  }

  /** Reads the remote settings (and the secret, when a URL is set) before the server (re)starts. */
  async load(): Promise<void> {
    const settings = vscode.workspace.getConfiguration('runloom.remote');
    const url = settings.get<string>('url', '').trim();
    if (!url) {
      this.loaded = undefined;
      return;
    }
    const clientSecret = this.sessionSecret ?? (await this.context.secrets.get(CLIENT_SECRET_KEY)) ?? '';
    this.loaded = { url, clientId: settings.get<string>('clientId', '').trim(), clientSecret };
  }

  /**
   * Uses `secret` from now on and keeps it in SecretStorage for the next sessions (empty: forgets
   * it). Not awaited: some hosts' stores answer late or never (code-server's web store, headless).
   */
  useClientSecret(secret: string): void {
    this.sessionSecret = secret;
    const kept = secret ? this.context.secrets.store(CLIENT_SECRET_KEY, secret) : this.context.secrets.delete(CLIENT_SECRET_KEY);
    kept.then(undefined, (error: unknown) => {
      void vscode.window.showWarningMessage(`The client secret works for this session but could not be saved: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}
