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
import { completionsAt, diagnosticsOf, hoverAt, kindOf } from './language-features';
import { runloomFileKinds } from './runloom-file-kinds';

/**
 * The Runloom language server: started by the extension over IPC (ARCHITECTURE.md, "VS Code"). It
 * validates Runloom's files as they are typed with the same schemas the HTTP API uses, and answers
 * completion and hover from those schemas.
 */
const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);

connection.onInitialize(() => ({
  capabilities: {
    textDocumentSync: TextDocumentSyncKind.Incremental,
    completionProvider: { triggerCharacters: [' ', ':', '-'] },
    hoverProvider: true,
  },
  serverInfo: { name: 'Runloom' },
}));

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
