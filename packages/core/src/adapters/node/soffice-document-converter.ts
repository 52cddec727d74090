import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { pathToFileURL } from 'node:url';
import {
  type ConvertedDocument,
  ConversionFailedError,
  ConverterUnavailableError,
  type ConvertibleFormat,
  type DocumentConverter,
} from '../../ports/document-converter';
import type { FileByteRange } from '../../ports/workspace-file-system';
import { fileReadStream } from './durable-file-io';

export interface SofficeDocumentConverterOptions {
  /** Where converted PDFs are kept, by the SHA-256 of their source (`<data-dir>/cache/pdf` by default). */
  cacheDir: string;
  /** The LibreOffice program (default `soffice`, found on the PATH). */
  binary?: string;
  /** How long one conversion may take before it is stopped (default 120 s). */
  timeoutMs?: number;
}

const INSTALL_HINT =
  'converting DOC and DOCX to PDF needs LibreOffice on the server: install the libreoffice-writer package ' +
  '(Debian/Ubuntu: apt-get install libreoffice-writer) so that soffice is on the PATH';

/**
 * LibreOffice (`soffice --headless --convert-to pdf`). Each conversion runs in a work folder of its
 * own under the cache dir, with its own user profile (`-env:UserInstallation`): two soffice
 * processes sharing a profile would make the second one hand its job to the first and exit. The
 * result is renamed into the cache as `<sha256>.pdf`, so a reader sees a whole PDF or none; the
 * same source converting twice at once shares one conversion.
 */
export class SofficeDocumentConverter implements DocumentConverter {
  private readonly binary: string;
  private readonly timeoutMs: number;
  private readonly running = new Map<string, Promise<void>>();

  constructor(private readonly options: SofficeDocumentConverterOptions) {
    this.binary = options.binary ?? 'soffice';
    this.timeoutMs = options.timeoutMs ?? 120_000;
  }

  async toPdf(source: ReadableStream<Uint8Array>, format: ConvertibleFormat): Promise<ConvertedDocument> {
    await fs.mkdir(this.options.cacheDir, { recursive: true });
    const work = path.join(this.options.cacheDir, `work-${randomBytes(8).toString('hex')}`);
    await fs.mkdir(work);
    try {
      const input = path.join(work, `source.${format}`);
      const sha256 = await saveHashed(source, input);
      const cached = path.join(this.options.cacheDir, `${sha256}.pdf`);
      if (!(await exists(cached))) {
        let conversion = this.running.get(sha256);
        if (!conversion) {
          conversion = this.convert(input, work, cached).finally(() => this.running.delete(sha256));
          this.running.set(sha256, conversion);
        }
        await conversion;
      }
      const { size } = await fs.stat(cached);
      return { sourceSha256: sha256, size, read: (range) => readFile(cached, size, range) };
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }

  private async convert(input: string, work: string, cached: string): Promise<void> {
    const outDir = path.join(work, 'out');
    const profile = pathToFileURL(path.join(work, 'profile')).href;
    await this.run(['--headless', '--norestore', '--nolockcheck', `-env:UserInstallation=${profile}`, '--convert-to', 'pdf', '--outdir', outDir, input]);
    const produced = path.join(outDir, `${path.basename(input, path.extname(input))}.pdf`);
    if (!(await exists(produced))) throw new ConversionFailedError('LibreOffice could not read the document as DOC or DOCX; no PDF was produced');
    await fs.rename(produced, cached);
  }

  /** Runs soffice in a process group of its own, killed whole past the time limit. */
  private run(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, { stdio: 'ignore', detached: true });
      const timer = setTimeout(() => {
        killGroup(child.pid);
        reject(new ConversionFailedError(`the conversion took longer than ${Math.round(this.timeoutMs / 1000)} s and was stopped`));
      }, this.timeoutMs);
      child.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(error.code === 'ENOENT' ? new ConverterUnavailableError(INSTALL_HINT) : error);
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new ConversionFailedError(`LibreOffice failed to convert the document (exit code ${code})`));
      });
    });
  }
}

/** Writes `source` to `file`, answering the SHA-256 of what was written. */
async function saveHashed(source: ReadableStream<Uint8Array>, file: string): Promise<string> {
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(Readable.fromWeb(source as NodeReadableStream<Uint8Array>), hashing, createWriteStream(file));
  return hash.digest('hex');
}

async function readFile(file: string, size: number, range?: FileByteRange): Promise<ReadableStream<Uint8Array>> {
  return fileReadStream(await fs.open(file, 'r'), range?.start ?? 0, range ? range.end + 1 : size);
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
