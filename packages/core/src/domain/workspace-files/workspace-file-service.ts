import { inject, injectable } from 'inversify';
import mime from 'mime-types';
import picomatch from 'picomatch';
import { RunloomConfig } from '../../config';
import { type ArchiveEntry, ArchiveWriter } from '../../ports/archive-writer';
import { DocumentConverter } from '../../ports/document-converter';
import type { FileByteRange, WorkspaceEntry, WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { DomainError, validationError } from '../errors';
import { tagSourceFailures, UploadInterruptedError } from '../input/upload-source';
import { pathProblem } from '../paths/safe-path';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import { WorkspaceService } from '../workspaces/workspace-service';
import { refusingFileErrors } from './workspace-file-errors';
import { searchPathsSchema, type SearchPathsInput, type SearchResult, type WorkspaceEntryJson } from './workspace-file-schemas';

/** A file as a client downloads it: what `contentResponse` needs. */
export interface FileDownload {
  name: string;
  mediaType: string;
  size: number;
  /** A strong entity tag (quoted). */
  etag: string;
  read(range?: FileByteRange): Promise<ReadableStream<Uint8Array>>;
}

/** What a change left: the entry, and whether it is new (201) or replaced an existing one (200). */
export interface FileChange {
  entry: WorkspaceEntryJson;
  created: boolean;
}

/** Content of a write: a stream (uploads), or bytes and text (the facade, empty files). */
export type FileContent = ReadableStream<Uint8Array> | Uint8Array | string;

export interface WriteOptions {
  /** The Content-Length the client declared: over the upload limit it is refused before a byte is read. */
  declaredSize?: number | null;
  /** The content must be exactly this many bytes (a signed upload): otherwise 400 and nothing is kept. */
  exactSize?: number;
}

/** Levels a zip walks at most: deeper than any real tree, bounded so a walk always ends. */
const ZIP_DEPTH = 1024;
const CONVERTIBLE = new Set(['doc', 'docx']);

/**
 * Why `path` cannot be an entry of a zip, if it cannot: the format (APPNOTE 4.4.17) has no drive
 * letter and no backslash in a name, since readers take `c:notes` as a drive and `a\b` as a
 * directory and file; storing such a name under another would change the file unasked.
 */
function unzippableName(path: string): string | undefined {
  if (path.includes('\\')) return 'a backslash, which zip readers take as a directory separator';
  if (/^[a-zA-Z]:/.test(path)) return 'a letter and a colon first, which zip readers take as a drive';
  return undefined;
}

/**
 * The files and directories of workspaces (docs/api.md#workspace-files): reads go through
 * `WorkspaceService.files` (404 for another account's workspace), changes first through
 * `requireWritable` (409 while archived), and each change is published on `WorkspaceEvents` once
 * the file system has it durably. Paths are checked here (`safe-path.ts`), so the facade refuses
 * what HTTP refuses, and the port's errors become refusals in one place (`workspace-file-errors.ts`).
 */
@injectable()
export class WorkspaceFileService {
  constructor(
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
    @inject(ArchiveWriter) private readonly archives: ArchiveWriter,
    @inject(DocumentConverter) private readonly converter: DocumentConverter,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  /** The entry at `path`, or 404. */
  async stat(accountId: string, workspaceId: string, path: string): Promise<WorkspaceEntryJson> {
    const target = checkedPath(path, 'path');
    const files = await this.workspaces.files(accountId, workspaceId);
    return entryJson(await requireEntry(files, target));
  }

  /** A file to download, with its media type by extension and an ETag from its size and mtime. */
  async download(accountId: string, workspaceId: string, path: string): Promise<FileDownload> {
    const target = checkedPath(path, 'path');
    const files = await this.workspaces.files(accountId, workspaceId);
    const entry = await requireFile(files, target);
    return fileDownload(files, entry, mediaTypeOf(target));
  }

  /**
   * The file as PDF: a `.pdf` as it is, a `.doc` or `.docx` converted by the `DocumentConverter`
   * (cached by content hash; 501 when LibreOffice is not installed), anything else 400.
   */
  async pdf(accountId: string, workspaceId: string, path: string): Promise<FileDownload> {
    const target = checkedPath(path, 'path');
    const files = await this.workspaces.files(accountId, workspaceId);
    const entry = await requireFile(files, target);
    const extension = extensionOf(target);
    if (extension === 'pdf') return fileDownload(files, entry, 'application/pdf');
    if (!CONVERTIBLE.has(extension)) {
      throw DomainError.invalid(`file/pdf serves PDF files and converts DOC and DOCX files; '${target}' is none of them`, [
        { path: 'path', message: 'must end in .pdf, .doc or .docx' },
      ]);
    }
    const converted = await refusingFileErrors(async () => this.converter.toPdf(await files.readFile(target), extension as 'doc' | 'docx'));
    return {
      name: `${baseName(target).replace(/\.[^.]*$/, '')}.pdf`,
      mediaType: 'application/pdf',
      size: converted.size,
      // The cached PDF is named by the source's hash: the same source always serves the same bytes.
      etag: `"pdf-${converted.sourceSha256}"`,
      read: (range) => converted.read(range),
    };
  }

  /**
   * Writes the file atomically (parents created), at most `uploadLimitBytes` (413 past it, nothing
   * kept); `file.created` or `file.updated` follows. See `WriteOptions` for the size checks.
   */
  async write(accountId: string, workspaceId: string, path: string, content: FileContent, options: WriteOptions = {}): Promise<FileChange> {
    const target = checkedPath(path, 'path');
    const limit = this.config.uploadLimitBytes;
    const { declaredSize, exactSize } = options;
    if (declaredSize != null && declaredSize > limit) throw DomainError.tooLarge(`the content is over the upload limit of ${limit} bytes`);
    if (exactSize !== undefined && declaredSize != null && declaredSize !== exactSize) throw wrongSize(exactSize, `${declaredSize}`);
    const files = await this.writableFiles(accountId, workspaceId);
    const source = content instanceof ReadableStream ? tagSourceFailures(content) : content;
    const sized = exactSize === undefined ? { content: source, problem: () => undefined } : exactly(source, exactSize);
    const { created, ...entry } = await refusingFileErrors(async () => {
      try {
        // A directory at the path is refused before the content is read (409).
        return await files.writeFile(target, sized.content, { maxBytes: exactSize ?? limit });
      } catch (error) {
        if (error instanceof UploadInterruptedError) throw DomainError.invalid(`the upload was cut off: ${error.message}; nothing was stored`);
        throw sized.problem() ?? error;
      }
    });
    await this.events.publish(workspaceId, { type: created ? 'file.created' : 'file.updated', path: target, size: entry.size });
    return { entry: entryJson(entry), created };
  }

  /** Creates the directory and its missing parents; `directory.created` when it did not exist. */
  async createDirectory(accountId: string, workspaceId: string, path: string): Promise<FileChange> {
    const target = checkedPath(path, 'path');
    const files = await this.writableFiles(accountId, workspaceId);
    const { entry, created } = await refusingFileErrors(async () => {
      const before = await files.stat(target);
      if (before?.type === 'file') throw DomainError.conflict(`'${target}' is a file; create the directory at another path`);
      return { entry: await files.mkdir(target), created: before === undefined };
    });
    if (created) await this.events.publish(workspaceId, { type: 'directory.created', path: target });
    return { entry: entryJson(entry), created };
  }

  /** Deletes a file (404 when missing, 409 for a directory); `file.deleted` follows. */
  async deleteFile(accountId: string, workspaceId: string, path: string): Promise<{ path: string }> {
    return this.delete(accountId, workspaceId, checkedPath(path, 'path'), 'file');
  }

  /** Deletes a directory and everything in it (404 when missing, 409 for a file); `directory.deleted` follows. */
  async deleteDirectory(accountId: string, workspaceId: string, path: string): Promise<{ path: string }> {
    return this.delete(accountId, workspaceId, checkedPath(path, 'path'), 'directory');
  }

  /** Renames or moves a file; `newPath` must not exist (409). `file.moved` follows. */
  async moveFile(accountId: string, workspaceId: string, path: string, newPath: string): Promise<WorkspaceEntryJson> {
    return this.move(accountId, workspaceId, checkedPath(path, 'path'), checkedPath(newPath, 'newPath'), 'file');
  }

  /** Renames or moves a directory with everything in it; `newPath` must not exist (409). `directory.moved` follows. */
  async moveDirectory(accountId: string, workspaceId: string, path: string, newPath: string): Promise<WorkspaceEntryJson> {
    return this.move(accountId, workspaceId, checkedPath(path, 'path'), checkedPath(newPath, 'newPath'), 'directory');
  }

  /**
   * Entries whose root-relative path matches `globPattern` (picomatch syntax), down to `maxDepth`
   * (default 10, at most 64), sorted by path; `stats` adds size and mtime. An invalid glob is 400.
   */
  async searchPaths(accountId: string, workspaceId: string, input: SearchPathsInput): Promise<SearchResult[]> {
    const parsed = searchPathsSchema.safeParse(input);
    if (!parsed.success) throw validationError(parsed.error);
    const { globPattern, maxDepth, stats } = parsed.data;
    refuseInvalidGlob(globPattern);
    const files = await this.workspaces.files(accountId, workspaceId);
    if (!stats) return refusingFileErrors(() => files.glob(globPattern, { maxDepth, stats: false }));
    const entries = await refusingFileErrors(() => files.glob(globPattern, { maxDepth }));
    return entries.map(entryJson);
  }

  /**
   * A zip of the directory (`''`: the whole workspace, `.runloom/` included: the config and
   * threads are part of it), streamed: the tree is listed first (so the size is known), then each
   * file is read as the archive reaches it.
   */
  async zip(accountId: string, workspaceId: string, path = ''): Promise<{ name: string; size: number; stream: ReadableStream<Uint8Array> }> {
    const target = checkedPath(path, 'path', { root: true });
    const workspace = await this.workspaces.require(accountId, workspaceId);
    const files = await this.workspaces.files(accountId, workspaceId);
    if (target !== '') {
      const entry = await requireEntry(files, target);
      if (entry.type !== 'directory') throw DomainError.conflict(`'${target}' is a file; download it with GET /workspace/{workspaceId}/file`);
    }
    const prefix = target === '' ? '' : `${target}/`;
    async function* entries(): AsyncIterable<ArchiveEntry> {
      for await (const entry of files.walk(target, { maxDepth: ZIP_DEPTH })) {
        const path = entry.path.slice(prefix.length);
        const problem = unzippableName(path);
        if (problem) throw DomainError.conflict(`'${entry.path}' cannot be put in a zip: its name has ${problem}; rename it, or download a directory that does not hold it`);
        if (entry.type === 'directory') yield { path, type: 'directory', mtime: entry.mtime, size: 0 };
        else yield { path, type: 'file', mtime: entry.mtime, size: entry.size, open: () => files.readFile(entry.path) };
      }
    }
    const archive = await refusingFileErrors(() => this.archives.zip(entries()));
    return { name: `${target === '' ? workspace.name : baseName(target)}.zip`, ...archive };
  }

  private async writableFiles(accountId: string, workspaceId: string): Promise<WorkspaceFileSystem> {
    await this.workspaces.requireWritable(accountId, workspaceId);
    return this.workspaces.files(accountId, workspaceId);
  }

  private async delete(accountId: string, workspaceId: string, target: string, type: WorkspaceEntry['type']): Promise<{ path: string }> {
    const files = await this.writableFiles(accountId, workspaceId);
    await refusingFileErrors(async () => {
      refuseOtherType(await requireEntry(files, target), type);
      await files.delete(target);
    });
    await this.events.publish(workspaceId, { type: `${type}.deleted`, path: target });
    return { path: target };
  }

  private async move(accountId: string, workspaceId: string, from: string, to: string, type: WorkspaceEntry['type']): Promise<WorkspaceEntryJson> {
    if (from === to) throw DomainError.invalid('newPath is the same as path; give the new path', [{ path: 'newPath', message: 'same as path' }]);
    if (to.startsWith(`${from}/`)) {
      throw DomainError.invalid(`cannot move '${from}' into itself ('${to}')`, [{ path: 'newPath', message: 'inside path' }]);
    }
    const files = await this.writableFiles(accountId, workspaceId);
    const moved = await refusingFileErrors(async () => {
      refuseOtherType(await requireEntry(files, from), type);
      if (await files.stat(to)) throw DomainError.conflict(`'${to}' exists; delete it first or choose another newPath`);
      const parent = to.includes('/') ? to.slice(0, to.lastIndexOf('/')) : '';
      if (parent !== '') await files.mkdir(parent);
      await files.rename(from, to);
      return requireEntry(files, to);
    });
    await this.events.publish(workspaceId, {
      type: `${type}.moved`,
      path: to,
      oldPath: from,
      newPath: to,
      ...(type === 'file' ? { size: moved.size } : {}),
    });
    return entryJson(moved);
  }
}

/**
 * `value` as a workspace path, or 400 naming `field` and what to fix: the `relative` rules, and no
 * trailing `/` (the port's rule: one spelling per path). A link out of the root is refused by the
 * port, also 400 (`fileRefusal`).
 */
export function checkedPath(value: string, field: string, options: { root?: boolean } = {}): string {
  const problem =
    pathProblem(value, { field, kind: 'relative', allowEmpty: options.root }) ??
    (value.endsWith('/') ? `${field} must not end in '/': remove it` : undefined);
  if (problem) throw DomainError.invalid(problem, [{ path: field, message: problem }]);
  return value;
}

/**
 * `content` checked to be exactly `size` bytes: a stream errors as soon as it passes `size` or ends
 * short of it, so the port discards the write; `problem()` then names the refusal.
 */
function exactly(content: FileContent, size: number): { content: FileContent; problem: () => DomainError | undefined } {
  if (!(content instanceof ReadableStream)) {
    const length = typeof content === 'string' ? new TextEncoder().encode(content).byteLength : content.byteLength;
    const problem = length === size ? undefined : wrongSize(size, `${length}`);
    if (problem) throw problem;
    return { content, problem: () => undefined };
  }
  let seen = 0;
  let problem: DomainError | undefined;
  const counted = content.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > size) {
          problem = wrongSize(size, `more than ${size}`);
          controller.error(problem);
        } else controller.enqueue(chunk);
      },
      flush(controller) {
        if (seen < size) {
          problem = wrongSize(size, `${seen}`);
          controller.error(problem);
        }
      },
    }),
  );
  return { content: counted, problem: () => problem };
}

function wrongSize(size: number, got: string): DomainError {
  return DomainError.invalid(`the upload URL is for exactly ${size} bytes and the body has ${got}; nothing was stored`, [
    { path: 'size', message: `the body must be exactly ${size} bytes` },
  ]);
}

/** 400 for a glob picomatch cannot compile (an unclosed bracket, brace or group). */
function refuseInvalidGlob(pattern: string): void {
  try {
    picomatch.makeRe(pattern, { strictBrackets: true, debug: true });
  } catch (error) {
    const message = `globPattern is not a valid glob: ${(error as Error).message}`;
    throw DomainError.invalid(message, [{ path: 'globPattern', message }]);
  }
}

async function requireEntry(files: WorkspaceFileSystem, path: string): Promise<WorkspaceEntry> {
  const entry = await refusingFileErrors(() => files.stat(path));
  if (!entry) throw DomainError.notFound(`file or directory '${path}'`);
  return entry;
}

async function requireFile(files: WorkspaceFileSystem, path: string): Promise<WorkspaceEntry> {
  const entry = await requireEntry(files, path);
  refuseOtherType(entry, 'file');
  return entry;
}

function refuseOtherType(entry: WorkspaceEntry, wanted: WorkspaceEntry['type']): void {
  if (entry.type === wanted) return;
  const route = entry.type === 'directory' ? '/directory' : '/file';
  throw DomainError.conflict(`'${entry.path}' is a ${entry.type}, not a ${wanted}; use the ${route} routes for it`);
}

/**
 * ETag from size and modification time, as nginx does: computing it costs no read of the file,
 * and every write through the port is an atomic rename that gives the file a new mtime. The one
 * change it misses is a rewrite to the same size within the same millisecond.
 */
function fileDownload(files: WorkspaceFileSystem, entry: WorkspaceEntry, mediaType: string): FileDownload {
  return {
    name: baseName(entry.path),
    mediaType,
    size: entry.size,
    etag: `"${entry.size.toString(16)}-${entry.mtime.getTime().toString(16)}"`,
    read: (range) => refusingFileErrors(() => files.readFile(entry.path, range)),
  };
}

/** Media type by extension (mime-db's table); unknown types are bytes. */
function mediaTypeOf(path: string): string {
  return mime.contentType(baseName(path)) || 'application/octet-stream';
}

function entryJson(entry: WorkspaceEntry): WorkspaceEntryJson {
  return { path: entry.path, type: entry.type, size: entry.size, mtime: entry.mtime.toISOString() };
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function extensionOf(path: string): string {
  const name = baseName(path);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}
