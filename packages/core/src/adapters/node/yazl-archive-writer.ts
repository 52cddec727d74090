import { PassThrough, Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { ZipFile } from 'yazl';
import type { ArchiveEntry, ArchiveWriter } from '../../ports/archive-writer';

/**
 * Zips with yazl. yazl reads one entry's stream at a time and pushes into its output with Node's
 * backpressure, and `addReadStreamLazy` opens a file only when its turn comes; entries are added
 * while the output is read, so at most one file is open and nothing is held but yazl's per-entry
 * record. Files are deflated; sizes over 4 GiB or over 65,535 entries switch to ZIP64 on their own.
 */
export class YazlArchiveWriter implements ArchiveWriter {
  zip(entries: AsyncIterable<ArchiveEntry>): ReadableStream<Uint8Array> {
    const zipfile = new ZipFile();
    const output = new PassThrough();
    let stopped = false;
    /** The file being read, closed when the reader cancels half-way. */
    let reading: Readable | undefined;
    zipfile.on('error', (error: Error) => output.destroy(error));
    zipfile.outputStream.on('error', (error) => output.destroy(error));
    zipfile.outputStream.pipe(output);
    output.on('close', () => {
      stopped = true;
      reading?.destroy();
    });
    void (async () => {
      try {
        for await (const entry of entries) {
          if (stopped) return;
          if (entry.type === 'directory') {
            zipfile.addEmptyDirectory(entry.path, { mtime: entry.mtime });
            continue;
          }
          const open = entry.open;
          if (!open) throw new Error(`archive entry ${entry.path} is a file without content`);
          zipfile.addReadStreamLazy(entry.path, { mtime: entry.mtime }, (callback) => {
            open().then(
              (stream) => {
                const readable = Readable.fromWeb(stream as NodeReadableStream<Uint8Array>);
                // A failed file fails the archive: a zip with a silently short entry would be worse.
                readable.on('error', (error) => output.destroy(error));
                reading = readable;
                callback(null, readable);
              },
              (error: Error) => callback(error, undefined as unknown as Readable),
            );
          });
        }
        zipfile.end();
      } catch (error) {
        output.destroy(error as Error);
      }
    })();
    return Readable.toWeb(output) as ReadableStream<Uint8Array>;
  }
}
