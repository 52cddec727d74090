import {
  CompletionItemKind,
  createConnection,
  DiagnosticSeverity,
  FileChangeType,
  MarkupKind,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
  type Diagnostic,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type InitializationOptions, ServerReady } from '../common/protocol';
import { serveBackendRequests } from './backend-requests';
import { EmbeddedBackend } from './embedded-backend';
import { startEmbeddedRunloom } from './embedded-runloom';
import { completionsAt, diagnosticsOf, hoverAt, kindOf } from './language-features';
import { RemoteBackend } from './remote-backend';
import type { FolderFileChange, RunloomBackend } from './runloom-backend';
import { runloomFileKinds } from './runloom-file-kinds';

/**
 * The Runloom language server: started by the extension over IPC (ARCHITECTURE.md, "VS Code"). It
 * validates Runloom's files as they are typed with the same schemas the HTTP API uses, answers
 * completion and hover from those schemas, and answers the extension's views through a backend:
 * the core embedded here (one workspace per open folder) or a remote `runloom serve`.
 */
const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
let startBackend: (starting: Promise<RunloomBackend>) => void = () => {};
/** Settles once the backend has started (requests wait for it). */
const backend = new Promise<RunloomBackend>((resolve) => (startBackend = resolve));
const stopForwarding = serveBackendRequests(connection, backend);
let backendStarted = false;

connection.onInitialize(({ initializationOptions, workspaceFolders }) => {
  const { storagePath, shellCommands, remote } = initializationOptions as InitializationOptions;
  const folders = (workspaceFolders ?? []).map((folder) => ({ path: fileUriPath(folder.uri), name: folder.name }));
  // The backend opens after the handshake, so the editor's first request is not held up by it.
  connection.onInitialized(() => {
    backendStarted = true;
    startBackend(remote ? RemoteBackend.connect(remote) : startEmbeddedRunloom(storagePath, folders, shellCommands).then((embedded) => new EmbeddedBackend(embedded)));
    backend.then(
      ({ workspaces }) => void connection.sendNotification(ServerReady.type, { workspaces }),
      (error: unknown) => void connection.sendNotification(ServerReady.type, { workspaces: [], error: error instanceof Error ? error.message : String(error) }),
    );
  });
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: [' ', ':', '-'] },
      hoverProvider: true,
    },
    serverInfo: { name: 'Runloom' },
  };
});

// Finish in-flight work and flush the store before the editor ends the process.
connection.onShutdown(async () => {
  stopForwarding();
  if (!backendStarted) return;
  const started = await backend.catch(() => undefined);
  await started?.close();
});

// Files saved, renamed or deleted in the editor, or changed by git: the folder's workspace events,
// one batch after the other so they are published in the order they happened.
let fileChanges: Promise<void> = Promise.resolve();
const CHANGE_KINDS: Record<FileChangeType, FolderFileChange['kind']> = { [FileChangeType.Created]: 'created', [FileChangeType.Changed]: 'changed', [FileChangeType.Deleted]: 'deleted' };
connection.onDidChangeWatchedFiles(({ changes }) => {
  const folderChanges = changes.filter((change) => change.uri.startsWith('file:')).map((change) => ({ path: fileUriPath(change.uri), kind: CHANGE_KINDS[change.type] }));
  if (folderChanges.length === 0) return;
  fileChanges = fileChanges
    .then(async () => (await backend).filesChanged(folderChanges))
    .catch((error: unknown) => connection.console.error(`folder changes not published: ${error instanceof Error ? error.message : String(error)}`));
});

function fileUriPath(uri: string): string {
  return decodeURIComponent(new URL(uri).pathname);
}

function fileKindOf(document: TextDocument): ReturnType<typeof kindOf> {
  return kindOf(runloomFileKinds, fileUriPath(document.uri));
}

documents.onDidChangeContent(({ document }) => {
  const kind = fileKindOf(document);
  if (!kind) return;
  const diagnostics: Diagnostic[] = diagnosticsOf(kind, document.getText()).map((diagnostic) => ({
    range: diagnostic.range,
    message: diagnostic.message,
    source: diagnostic.source,
    severity: diagnostic.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
  }));
  void connection.sendDiagnostics({ uri: document.uri, version: document.version, diagnostics });
});

// A closed file's problems leave the Problems view with it.
documents.onDidClose(({ document }) => void connection.sendDiagnostics({ uri: document.uri, diagnostics: [] }));

connection.onCompletion(({ textDocument, position }) => {
  const document = documents.get(textDocument.uri);
  const kind = document && fileKindOf(document);
  if (!document || !kind) return [];
  return completionsAt(kind, document.getText(), position.line, position.character).map((completion) => ({
    label: completion.label,
    kind: completion.kind === 'property' ? CompletionItemKind.Property : CompletionItemKind.EnumMember,
    insertText: completion.insertText,
    sortText: completion.sortText,
    documentation: completion.documentation && { kind: MarkupKind.Markdown, value: completion.documentation },
  }));
});

connection.onHover(({ textDocument, position }) => {
  const document = documents.get(textDocument.uri);
  const kind = document && fileKindOf(document);
  const markdown = document && kind && hoverAt(kind, document.getText(), position.line, position.character);
  return markdown ? { contents: { kind: MarkupKind.Markdown, value: markdown } } : null;
});

documents.listen(connection);
connection.listen();
