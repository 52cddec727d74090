import { Busboy } from '@fastify/busboy';
import { pipeline, Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { MultipartError, type MultipartLimits, type MultipartParser, type MultipartPart } from '../../ports/multipart-parser';

/** Which part is a file: the `file` part always (whatever its content type), and any part with a filename. */
function isPartAFile(name: string | undefined, _contentType: string | undefined, filename: string | undefined): boolean {
  return name === 'file' || filename !== undefined;
}

/**
 * `multipart/form-data` through `@fastify/busboy`: parts are handed out as they arrive, file
 * contents as streams that pull the body along, so nothing is buffered beyond busboy's own chunks.
 */
export class BusboyMultipartParser implements MultipartParser {
  async *parse(body: ReadableStream<Uint8Array>, contentType: string, limits: MultipartLimits): AsyncIterable<MultipartPart> {
    let busboy: ReturnType<typeof Busboy>;
    try {
      busboy = Busboy({
        headers: { 'content-type': contentType },
        isPartAFile,
        limits: { fieldSize: limits.fieldBytes, fields: limits.fields, parts: limits.parts },
      });
    } catch (error) {
      throw new MultipartError(`the multipart body cannot be read: ${(error as Error).message}`);
    }

    const queue: (MultipartPart | MultipartError | 'end')[] = [];
    let wake: (() => void) | undefined;
    const push = (item: MultipartPart | MultipartError | 'end'): void => {
      queue.push(item);
      wake?.();
      wake = undefined;
    };

    busboy.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) push(new MultipartError(`field ${name} is over the limit of ${limits.fieldBytes} bytes`));
      else push({ kind: 'field', name, value });
    });
    let currentFile: Readable | undefined;
    busboy.on('file', (name, stream, filename, _encoding, mimeType) => {
      currentFile = stream;
      // Busboy emits a part's failure as a bare event: record it on the stream, whenever it is read.
      stream.on('error', (error) => stream.destroy(error));
      push({ kind: 'file', name, filename, mimeType, content: webStreamOf(stream) });
    });
    busboy.on('fieldsLimit', () => push(new MultipartError(`the form has more than ${limits.fields} fields`)));
    busboy.on('partsLimit', () => push(new MultipartError(`the form has more than ${limits.parts} parts`)));
    busboy.on('finish', () => push('end'));

    let released = false;
    const source = Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
    pipeline(source, busboy, (error) => {
      if (!error || released) return;
      const failure = new MultipartError(`the multipart body cannot be read: ${error.message}`);
      // The consumer may be reading the file part rather than waiting for the next part.
      if (currentFile && !currentFile.readableEnded) currentFile.destroy(failure);
      push(failure);
    });

    try {
      for (;;) {
        const item = queue.shift();
        if (item === undefined) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          continue;
        }
        if (item === 'end') return;
        if (item instanceof MultipartError) throw item;
        yield item;
      }
    } finally {
      // Stopping early (an error, a refused upload) releases the rest of the body.
      released = true;
      currentFile?.destroy();
      source.destroy();
      busboy.destroy();
    }
  }
}

/** A file part as a web stream; its failures (a body cut off inside the part) become `MultipartError`s. */
function webStreamOf(file: Readable): ReadableStream<Uint8Array> {
  const chunks = file[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (error) {
          controller.error(error instanceof MultipartError ? error : new MultipartError(`the file part cannot be read: ${(error as Error).message}`));
        }
      },
      async cancel() {
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
