import * as vscode from 'vscode';
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from 'vscode-languageclient/node';
import {
  CreateThread,
  DeleteThread,
  type FolderWorkspace,
  type ProcessRunAction,
  type ProcessTaskAction,
  ServerReady,
  SetShellCommands,
  StartProcessRun,
  WorkspaceEventNotification,
} from '../common/protocol';
import { type ChatPanel, ChatPanels } from './chat-panel';
import { CommandsView } from './commands-view';
import { ProcessRunsView } from './process-runs-view';
import { type ProviderCredentialsInput, sendStoredCredentials, setProviderCredentials } from './provider-keys';
import { ServerSettings } from './server-settings';
import { threadOf, ThreadsView } from './threads-view';

/**
 * The extension host side stays thin (ARCHITECTURE.md, "VS Code"): it starts the Runloom language
 * server over IPC (the core runs there), shows what it answers in views and panels, and hands it the
 * editor's documents and the provider keys from SecretStorage.
 */
let client: LanguageClient | undefined;

/** The files the language server understands; it is told about these documents only. */
export const RUNLOOM_DOCUMENTS: LanguageClientOptions['documentSelector'] = [
  { scheme: 'file', pattern: '**/*.runnable.{yaml,yml}' },
  { scheme: 'file', pattern: '**/.runloom/workspace-config.runloom.yaml' },
  { scheme: 'file', pattern: '**/*.process.{yaml,yml}' },
  { scheme: 'file', pattern: '**/.runloom/commands/*.yaml' },
];

/** What `activate` answers: for other extensions and for the integration suite. */
export interface RunloomExtensionApi {
  /** Resolves with the open folders' workspaces once the embedded core has started. */
  ready: Promise<FolderWorkspace[]>;
  openThread(workspaceId: string, threadId: string): Promise<ChatPanel>;
  /**
   * How long activation took, and how long from its start until the language server answered its
   * first request (`npm run bench -- vscode` reads both).
   */
  timings: { activationMs: number; firstAnswerMs: Promise<number> };
  /** Every event of the open workspaces' streams, as the server forwards it. */
  onWorkspaceEvent: vscode.Event<{ workspaceId: string; event: { type: string; [field: string]: unknown } }>;
  /** The views' data (what each tree shows). */
  threadsView: ThreadsView;
  commandsView: CommandsView;
  processRunsView: ProcessRunsView;
}

export function activate(context: vscode.ExtensionContext): RunloomExtensionApi {
  const activationStart = performance.now();
  const output = vscode.window.createOutputChannel('Runloom');
  context.subscriptions.push(output);
  const module = context.asAbsolutePath('dist/server.js');
  const serverOptions: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6010'] } },
  };
  const settings = new ServerSettings(context);
  const languageClient = new LanguageClient('runloom', 'Runloom', serverOptions, {
    documentSelector: RUNLOOM_DOCUMENTS,
    outputChannel: output,
    // Read at each (re)start: the backend and the shell permission as they are then.
    initializationOptions: () => settings.initializationOptions,
    // Saved, renamed or deleted files (the editor, git, tools) reach the server's folder watcher.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*') },
  });
  client = languageClient;
  context.subscriptions.push(languageClient);

  const threads = new ThreadsView(languageClient);
  const threadsTree = vscode.window.createTreeView('runloom.threads', { treeDataProvider: threads });
  const panels = new ChatPanels(context.extensionUri, languageClient, () => threads.refresh());
  const commandsView = new CommandsView(languageClient);
  const processRuns = new ProcessRunsView(languageClient);
  context.subscriptions.push(
    panels,
    threads,
    commandsView,
    processRuns,
    threadsTree,
    vscode.window.createTreeView('runloom.commands', { treeDataProvider: commandsView }),
    vscode.window.createTreeView('runloom.processRuns', { treeDataProvider: processRuns }),
  );

  const workspaceEvents = new vscode.EventEmitter<{ workspaceId: string; event: { type: string; [field: string]: unknown } }>();
  let markReady: (workspaces: FolderWorkspace[]) => void = () => {};
  const ready = new Promise<FolderWorkspace[]>((resolve) => (markReady = resolve));
  const workspaces = (): Promise<FolderWorkspace[]> => ready;
  const onlyWorkspace = async (): Promise<FolderWorkspace | undefined> => {
    const open = await workspaces();
    if (open.length <= 1) return open[0];
    const picked = await vscode.window.showQuickPick(
      open.map((workspace) => ({ label: workspace.name, description: workspace.folder, workspace })),
      { placeHolder: 'Which folder?' },
    );
    return picked?.workspace;
  };

  const sendShellCommands = (): void => void languageClient.sendNotification(SetShellCommands.type, { enabled: settings.shellCommands });

  const commands: [string, (...args: never[]) => unknown][] = [
    ['runloom.refreshThreads', () => threads.refresh()],
    [
      'runloom.newThread',
      async (title?: string) => {
        const workspace = await onlyWorkspace();
        if (!workspace) return undefined;
        const name = title ?? (await vscode.window.showInputBox({ prompt: 'Title of the new thread', value: 'New thread' }));
        if (!name) return undefined;
        const created = await languageClient.sendRequest(CreateThread.type, { workspaceId: workspace.workspaceId, title: name });
        threads.refresh();
        await panels.open(created.workspaceId, created.threadId);
        return created;
      },
    ],
    ['runloom.openThread', (workspaceId: string, threadId: string) => panels.open(workspaceId, threadId)],
    [
      'runloom.deleteThread',
      async (node: unknown) => {
        const thread = threadOf(node);
        if (!thread) return;
        const confirmed = await vscode.window.showWarningMessage(`Delete the thread "${thread.title}"?`, { modal: true }, 'Delete');
        if (confirmed !== 'Delete') return;
        await languageClient.sendRequest(DeleteThread.type, { workspaceId: thread.workspaceId, threadId: thread.threadId });
        threads.refresh();
      },
    ],
    ['runloom.stopReply', async () => panels.active()?.stop()],
    ['runloom.refreshCommands', () => commandsView.refresh()],
    ['runloom.runCommand', (node: unknown, args?: string[]) => commandsView.run(node, args)],
    ['runloom.cancelExecution', (runId?: string) => commandsView.cancel(runId)],
    ['runloom.refreshProcessRuns', () => processRuns.refresh()],
    [
      'runloom.runProcessFile',
      async (uri?: vscode.Uri) => {
        const file = uri ?? vscode.window.activeTextEditor?.document.uri;
        if (!file || !/\.process\.ya?ml$/i.test(file.path)) {
          void vscode.window.showWarningMessage('Open a *.process.yaml file (a process specification) to run it.');
          return undefined;
        }
        const folder = vscode.workspace.getWorkspaceFolder(file);
        // The file's folder, or (a remote server's workspaces are not folders here) the one picked.
        const workspace = (await workspaces()).find((candidate) => candidate.folder === folder?.uri.fsPath) ?? (settings.remote ? await onlyWorkspace() : undefined);
        if (!workspace) return undefined;
        const specYaml = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
        const processId = file.path.split('/').pop()!.replace(/\.process\.ya?ml$/i, '');
        const run = await languageClient.sendRequest(StartProcessRun.type, { workspaceId: workspace.workspaceId, processId, specYaml });
        processRuns.refresh();
        await vscode.commands.executeCommand('runloom.processRuns.focus');
        return run;
      },
    ],
    ...(['start', 'pause', 'resume', 'cancel', 'approve', 'reject', 'retry', 'skip'] as const).map(
      (action): [string, (node: unknown) => unknown] => [`runloom.process.${action}`, (node: unknown) => processRuns.act(node, action as ProcessRunAction | ProcessTaskAction)],
    ),
    [
      'runloom.setProviderApiKey',
      (input?: ProviderCredentialsInput) => {
        if (!settings.remote) return setProviderCredentials(context.secrets, languageClient, input);
        void vscode.window.showInformationMessage(`Connected to ${settings.remote.url}: that server uses the provider keys its operator configured.`);
        return false;
      },
    ],
    [
      'runloom.setRemoteClientSecret',
      async (secret?: string) => {
        const value = secret ?? (await vscode.window.showInputBox({ prompt: 'Client secret of runloom.remote.clientId on the remote Runloom server', password: true, ignoreFocusOut: true }));
        if (value === undefined) return false;
        settings.useClientSecret(value);
        if (settings.remote) await restartServer();
        return true;
      },
    ],
  ];
  for (const [id, handler] of commands) context.subscriptions.push(vscode.commands.registerCommand(id, handler as (...args: unknown[]) => unknown));

  context.subscriptions.push(
    languageClient.onNotification(ServerReady.type, ({ workspaces: opened, error }) => {
      if (error) {
        output.appendLine(`Runloom could not open the folders' workspaces: ${error}`);
        void vscode.window.showErrorMessage(`Runloom could not start: ${error}`);
      }
      // Which server the views show, when it is not the editor's own.
      threadsTree.description = settings.remote?.url.replace(/^https?:\/\//, '');
      threads.setWorkspaces(opened);
      commandsView.setWorkspaces(opened);
      processRuns.setWorkspaces(opened);
      const keysSent = settings.remote ? Promise.resolve() : sendStoredCredentials(context.secrets, languageClient);
      void keysSent.then(() => markReady(opened));
    }),
    workspaceEvents,
    languageClient.onNotification(WorkspaceEventNotification.type, ({ workspaceId, event }) => {
      workspaceEvents.fire({ workspaceId, event });
      if (event.type.startsWith('thread.')) threads.refresh();
      else if (event.type.startsWith('command.') && event.type !== 'command.execution.updated') commandsView.refresh();
      else if (event.type === 'process.run.updated' || event.type === 'task.updated') processRuns.refresh();
      // Command files edited in the editor (or by git) show in the Commands view at once.
      else if (event.type.startsWith('file.') && String(event.path).startsWith('.runloom/commands/')) commandsView.refresh();
    }),
    // Trust granted, or the setting changed: shell commands follow at once, in the running server.
    vscode.workspace.onDidGrantWorkspaceTrust(sendShellCommands),
    vscode.workspace.onDidChangeConfiguration((change) => {
      if (change.affectsConfiguration('runloom.commands.allowShell')) sendShellCommands();
      // Another backend: a new server process with it.
      if (change.affectsConfiguration('runloom.remote')) void restartServer();
    }),
  );
  // Not awaited: activation returns at once and the server comes up beside the editor (in remote
  // mode once the client secret is read from SecretStorage).
  const started = settings.load().then(() => languageClient.start());
  /** Restarts the server with the settings as they are now, one restart after the other. */
  let restarting: Promise<void> = started.catch(() => undefined);
  const restartServer = (): Promise<void> => {
    restarting = restarting.then(async () => {
      await settings.load();
      await languageClient.restart();
    });
    restarting.catch((error: unknown) => output.appendLine(`the Runloom language server did not restart: ${error instanceof Error ? error.message : String(error)}`));
    return restarting.catch(() => undefined);
  };
  started.catch((error: unknown) => output.appendLine(`the Runloom language server did not start: ${error instanceof Error ? error.message : String(error)}`));
  // start() settles when the server has answered `initialize`, its first request.
  const firstAnswerMs = started.then(() => performance.now() - activationStart);
  firstAnswerMs.catch(() => undefined);
  const timings = { activationMs: performance.now() - activationStart, firstAnswerMs };
  return {
    timings,
    ready,
    openThread: (workspaceId, threadId) => panels.open(workspaceId, threadId),
    onWorkspaceEvent: workspaceEvents.event,
    threadsView: threads,
    commandsView,
    processRunsView: processRuns,
  };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
