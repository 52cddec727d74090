import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { FromChatView, ToChatView } from '../common/chat-messages';
import { GetThreadMessages, type ModelChoice, ReplyChunks, SendMessage, StopReply } from '../common/protocol';

/** What a chat panel's DOM shows (its own report), for tests and diagnostics. */
export type RenderedChat = Extract<FromChatView, { type: 'rendered' }>;

/** Shows a status bar item while any reply streams. */
class StreamingStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private readonly streaming = new Set<string>();

  constructor() {
    this.item.text = '$(sync~spin) Runloom is replying…';
    this.item.tooltip = 'Stop the reply';
    this.item.command = 'runloom.stopReply';
  }

  set(key: string, active: boolean): void {
    if (active) this.streaming.add(key);
    else this.streaming.delete(key);
    if (this.streaming.size > 0) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** "provider/model" as typed in the panel; empty means the workspace configuration's default. */
export function parseModel(text: string): ModelChoice | undefined {
  const slash = text.indexOf('/');
  if (!text) return undefined;
  if (slash <= 0 || slash === text.length - 1) throw new Error(`write the model as provider/model (e.g. openai/gpt-4o), not '${text}'`);
  return { provider: text.slice(0, slash), model: text.slice(slash + 1) };
}

/**
 * One webview panel per thread: it renders the thread and streams replies into it as the language
 * server forwards their chunks (the same UI message stream chunks as the HTTP route).
 */
export class ChatPanels implements vscode.Disposable {
  private readonly panels = new Map<string, ChatPanel>();
  private readonly status = new StreamingStatus();
  /** Models sent to lately, newest first: the model pickers offer them. */
  private readonly recentModels: string[] = [];
  private readonly subscriptions: vscode.Disposable[] = [this.status];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly client: LanguageClient,
    /** Called when a reply has ended (the Threads view shows which threads are replying). */
    onReplyEnded: () => void,
  ) {
    this.subscriptions.push(
      client.onNotification(ReplyChunks.type, ({ workspaceId, threadId, chunks, ended }) => {
        const key = keyOf(workspaceId, threadId);
        this.status.set(key, !ended);
        if (ended) onReplyEnded();
        this.panels.get(key)?.post({ type: 'chunks', chunks, ended });
      }),
    );
  }

  /** Opens (or reveals) the thread's panel. */
  async open(workspaceId: string, threadId: string): Promise<ChatPanel> {
    const key = keyOf(workspaceId, threadId);
    const existing = this.panels.get(key);
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const panel = new ChatPanel(this.extensionUri, this.client, workspaceId, threadId, {
      onStreaming: (streaming) => this.status.set(key, streaming),
      recentModels: this.recentModels,
    });
    this.panels.set(key, panel);
    panel.panel.onDidDispose(() => this.panels.delete(key));
    await panel.ready;
    return panel;
  }

  /** The panel in front, for commands run from the palette. */
  active(): ChatPanel | undefined {
    return [...this.panels.values()].find((panel) => panel.panel.active);
  }

  dispose(): void {
    for (const panel of this.panels.values()) panel.panel.dispose();
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}

export class ChatPanel {
  readonly panel: vscode.WebviewPanel;
  /** Resolves once the page has loaded and shown the thread. */
  readonly ready: Promise<void>;
  private renderWaiters: ((rendered: RenderedChat) => void)[] = [];
  private firstTokenWaiters: (() => void)[] = [];

  constructor(
    extensionUri: vscode.Uri,
    private readonly client: LanguageClient,
    readonly workspaceId: string,
    readonly threadId: string,
    private readonly shared: { onStreaming(streaming: boolean): void; recentModels: string[] },
  ) {
    const webviewRoot = vscode.Uri.joinPath(extensionUri, 'dist', 'webview');
    const media = vscode.Uri.joinPath(extensionUri, 'media');
    this.panel = vscode.window.createWebviewPanel('runloom.chat', 'Thread', vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [webviewRoot, media],
    });
    this.panel.iconPath = vscode.Uri.joinPath(media, 'runloom.svg');
    const webview = this.panel.webview;
    const nonce = newNonce();
    webview.html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; img-src ${webview.cspSource} https: data:; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${webview.asWebviewUri(vscode.Uri.joinPath(media, 'chat.css')).toString()}">
<title>Thread</title>
</head>
<body>
<main id="messages" aria-live="polite">
<section id="empty" hidden>
<h1>Ask Runloom</h1>
<p>Replies stream in as the model writes them and are kept in this folder's <code>.runloom/threads</code>.</p>
<p>Stop a reply at any time: what was written so far stays in the thread.</p>
</section>
</main>
<div id="notice" role="alert"></div>
<form id="composer">
<textarea id="input" rows="3" placeholder="Ask Runloom… (Enter to send, Shift+Enter for a new line)"></textarea>
<div class="toolbar">
<label for="model">Model</label>
<input id="model" list="models" placeholder="the folder's default" title="provider/model, e.g. openai/gpt-4o; empty: models.default of .runloom/workspace-config.runloom.yaml" spellcheck="false">
<datalist id="models"></datalist>
<span class="spacer"></span>
<button id="stop" type="button" class="secondary" hidden>Stop</button>
<button id="send" type="submit">Send</button>
</div>
</form>
<script nonce="${nonce}" src="${webview.asWebviewUri(vscode.Uri.joinPath(webviewRoot, 'chat.js')).toString()}"></script>
</body>
</html>`;
    let loaded: () => void = () => {};
    this.ready = new Promise((resolve) => (loaded = resolve));
    webview.onDidReceiveMessage(async (message: FromChatView) => {
      switch (message.type) {
        case 'ready':
          await this.showHistory();
          break;
        case 'shown':
          loaded();
          break;
        case 'send':
          await this.send(message.text, message.model);
          break;
        case 'stop':
          await this.stop();
          break;
        case 'rendered':
          for (const resolve of this.renderWaiters.splice(0)) resolve(message);
          break;
        case 'first-token':
          for (const resolve of this.firstTokenWaiters.splice(0)) resolve();
          break;
      }
    });
  }

  post(message: ToChatView): void {
    void this.panel.webview.postMessage(message);
  }

  /** Sends as if typed in the panel (the command palette's "send" and tests use it). */
  async send(text: string, model: string): Promise<void> {
    try {
      const { userMessageId } = await this.client.sendRequest(SendMessage.type, { workspaceId: this.workspaceId, threadId: this.threadId, text, model: parseModel(model) });
      this.shared.onStreaming(true);
      if (model) {
        const recent = this.shared.recentModels;
        if (recent.includes(model)) recent.splice(recent.indexOf(model), 1);
        recent.unshift(model);
      }
      this.post({ type: 'sent', message: { id: userMessageId, role: 'user', text } });
    } catch (error) {
      this.post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Stops the reply; what was streamed so far stays in the thread, marked cancelled. */
  async stop(): Promise<boolean> {
    const { stopped } = await this.client.sendRequest(StopReply.type, { workspaceId: this.workspaceId, threadId: this.threadId });
    return stopped;
  }

  /** Resolves when the next reply's first token is rendered in the page. */
  firstToken(): Promise<void> {
    return new Promise((resolve) => this.firstTokenWaiters.push(resolve));
  }

  /** What the page shows now, as the page itself reports it. */
  rendered(): Promise<RenderedChat> {
    const answer = new Promise<RenderedChat>((resolve) => this.renderWaiters.push(resolve));
    this.post({ type: 'render-report' });
    return answer;
  }

  private async showHistory(): Promise<void> {
    const thread = await this.client.sendRequest(GetThreadMessages.type, { workspaceId: this.workspaceId, threadId: this.threadId });
    this.panel.title = thread.title;
    const model = vscode.workspace.getConfiguration('runloom').get<string>('defaultModel') ?? '';
    const streaming = thread.messages.some((message) => message.status === 'streaming');
    const used = thread.messages.flatMap((message) => (message.model ? [message.model] : [])).reverse();
    const models = [...new Set([model, ...this.shared.recentModels, ...used].filter(Boolean))];
    this.post({ type: 'history', title: thread.title, messages: thread.messages, model, models, streaming });
  }
}

function keyOf(workspaceId: string, threadId: string): string {
  return `${workspaceId}/${threadId}`;
}

function newNonce(): string {
  const bytes = new Uint8Array(24);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString('base64url');
}
