import {
  CompletionItemKind,
  createConnection,
  DiagnosticSeverity,
  MarkupKind,
  ProposedFeatures,
  TextDocuments,
  TextDocumentSyncKind,
  type Diagnostic,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type InitializationOptions, ServerReady } from '../common/protocol';
import { type EmbeddedRunloom, startEmbeddedRunloom } from './embedded-runloom';
import { completionsAt, diagnosticsOf, hoverAt, kindOf } from './language-features';
import { runloomFileKinds } from './runloom-file-kinds';
import { serveWorkflowRequests } from './workflow-requests';
import { serveWorkspaceRequests } from './workspace-requests';

/**
 * The Runloom language server: started by the extension over IPC (ARCHITECTURE.md, "VS Code"). It
 * validates Runloom's files as they are typed with the same schemas the HTTP API uses, answers
 * completion and hover from those schemas, and carries the core: one workspace per open folder,
 * whose threads the extension's panels show through the requests of `common/protocol.ts`.
 */
const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
let startCore: (starting: Promise<EmbeddedRunloom>) => void = () => {};
/** The embedded core: settles once it has opened the folders' workspaces (requests wait for it). */
const embedded = new Promise<EmbeddedRunloom>((resolve) => (startCore = resolve));
const stopForwarding = serveWorkspaceRequests(connection, embedded);
serveWorkflowRequests(connection, embedded);
let coreStarted = false;

connection.onInitialize(({ initializationOptions, workspaceFolders }) => {
  const { storagePath } = initializationOptions as InitializationOptions;
  const folders = (workspaceFolders ?? []).map((folder) => ({ path: decodeURIComponent(new URL(folder.uri).pathname), name: folder.name }));
  // The core opens after the handshake, so the editor's first request is not held up by it.
  connection.onInitialized(() => {
    coreStarted = true;
    startCore(startEmbeddedRunloom(storagePath, folders));
    embedded.then(
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
  if (!coreStarted) return;
  const started = await embedded.catch(() => undefined);
  await started?.runloom.close();
});

function fileKindOf(document: TextDocument): ReturnType<typeof kindOf> {
  return kindOf(runloomFileKinds, decodeURIComponent(new URL(document.uri).pathname));
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
