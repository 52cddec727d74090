import { PassThrough, Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { ZipFile } from 'yazl';
import type { Archive, ArchiveEntry, ArchiveWriter } from '../../ports/archive-writer';

/**
 * Zips with yazl, every file stored (no deflate) with its size given up front, which is what lets
 * yazl compute the archive's total size once the last entry is added. `addReadStreamLazy` opens a
 * file only when its turn comes and yazl pipes one file at a time into its output with Node's
 * backpressure, so at most one file is open and nothing is held but yazl's record per entry.
 * Sizes over 4 GiB or over 65,535 entries switch to ZIP64 on their own.
 */
export class YazlArchiveWriter implements ArchiveWriter {
  async zip(entries: AsyncIterable<ArchiveEntry>): Promise<Archive> {
    const zipfile = new ZipFile();
    const output = new PassThrough();
    /** The file being read, closed when the reader cancels half-way. */
    let reading: Readable | undefined;
    /** yazl's first failure: after it, yazl ignores `end()` and never announces a size. */
    let failure: Error | undefined;
    zipfile.on('error', (error: Error) => {
      failure ??= error;
      output.destroy(error);
    });
    zipfile.outputStream.on('error', (error) => output.destroy(error));
    zipfile.outputStream.pipe(output);
    output.on('close', () => reading?.destroy());
    // A failure reaches the reader through `pulledFrom`; once the reader has gone, it reaches no
    // one, and an 'error' event without a listener would take the process down.
    output.on('error', () => undefined);
    try {
      for await (const entry of entries) {
        if (failure) break;
        if (entry.type === 'directory') {
          zipfile.addEmptyDirectory(entry.path, { mtime: entry.mtime });
          continue;
        }
        const open = entry.open;
        if (!open) throw new Error(`archive entry ${entry.path} is a file without content`);
        zipfile.addReadStreamLazy(entry.path, { mtime: entry.mtime, size: entry.size, compress: false }, (callback) => {
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
    } catch (error) {
      output.destroy();
      throw error;
    }
    // yazl passes the total size to this callback (@types/yazl declares it without the argument),
    // and never calls it once it has failed (a first file gone already): the zip is refused then.
    const size = await new Promise<number>((resolve, reject) => {
      if (failure) return reject(failure);
      zipfile.once('error', reject);
      zipfile.end({ forceZip64Format: false, comment: '' }, ((total: number) => resolve(total)) as () => void);
    }).catch((error: unknown) => {
      output.destroy();
      throw error;
    });
    if (size < 0) throw new Error('yazl could not compute the size of a stored archive');
    return { size, stream: pulledFrom(output) };
  }
}

/**
 * `readable` as a web stream that reads only when pulled; cancelling destroys `readable`. Not
 * `Readable.toWeb`: in Node 20 it still enqueues data that arrives after a cancel (HEAD cancels
 * every body), which throws ERR_INVALID_STATE out of an event handler.
 */
function pulledFrom(readable: Readable): ReadableStream<Uint8Array> {
  const chunks = readable[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // A failure before the first pull: the iterator, not yet started, would wait forever.
        if (readable.errored) return controller.error(readable.errored);
        const { done, value } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        // Destroyed here too: an iterator never pulled has not started, and its return() does nothing.
        readable.destroy();
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
