import { strict as assert } from 'node:assert';
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import type { ArchiveEntry, ArchiveWriter } from '../ports/archive-writer';

/** The behaviour every `ArchiveWriter` adapter must have; each adapter's test file runs it. */
export function archiveWriterContract(name: string, create: () => ArchiveWriter): void {
  describe(`ArchiveWriter contract: ${name}`, () => {
    it('writes a zip of the announced size whose entries read back with their paths, contents and directories', async () => {
      const big = new Uint8Array(3 * 1024 * 1024).map((_, index) => (index * 31) % 251);
      const archive = await create().zip(
        entries([
          { path: 'docs', type: 'directory', mtime: new Date('2024-05-01T10:00:00Z'), size: 0 },
          file('docs/a.txt', 'hello'),
          file('docs/empty.txt', ''),
          file('big.bin', big),
          file('ünï cöde.txt', 'text'),
        ]),
      );
      const zip = await collect(archive.stream);
      assert.equal(zip.length, archive.size);
      const read = await unzip(zip);
      assert.deepEqual([...read.keys()], ['docs/', 'docs/a.txt', 'docs/empty.txt', 'big.bin', 'ünï cöde.txt']);
      assert.equal(Buffer.from(read.get('docs/a.txt')!).toString(), 'hello');
      assert.equal(read.get('docs/empty.txt')!.length, 0);
      assert.ok(Buffer.from(read.get('big.bin')!).equals(Buffer.from(big)));
    });

    it('opens each file only when the archive reaches it', async () => {
      const opened: string[] = [];
      const tracked = (path: string): ArchiveEntry => ({
        path,
        type: 'file',
        mtime: new Date(),
        size: 64 * 1024,
        open: async () => {
          opened.push(path);
          return streamOf(new Uint8Array(64 * 1024));
        },
      });
      const reader = (await create().zip(entries([tracked('1'), tracked('2'), tracked('3')]))).stream.getReader();
      await reader.read();
      assert.ok(opened.length < 3, `opened ${opened.join(', ')} before the archive was read`);
      while (!(await reader.read()).done);
      assert.deepEqual(opened, ['1', '2', '3']);
    });

    it('errors the archive when a file fails, instead of writing a short entry', async () => {
      const failing: ArchiveEntry = {
        path: 'bad.txt',
        type: 'file',
        mtime: new Date(),
        size: 10,
        open: async () => new ReadableStream({ pull: (controller) => controller.error(new Error('disk gone')) }),
      };
      await assert.rejects(collect((await create().zip(entries([file('ok.txt', 'ok'), failing]))).stream), /disk gone/);
    });

    it('rejects, or errors the stream, when a file fails before the first read, never throwing it', async () => {
      let failed!: () => void;
      const failure = new Promise<void>((resolve) => (failed = resolve));
      const failing: ArchiveEntry = {
        path: 'gone.txt',
        type: 'file',
        mtime: new Date(),
        size: 4,
        open: async () => {
          setImmediate(failed);
          throw new Error('deleted meanwhile');
        },
      };
      const writer = create();
      const reading = writer.zip(entries([file('first.txt', 'first'), failing])).then((archive) => failure.then(() => collect(archive.stream)));
      // Had the failure escaped as an 'error' event, this test would fail as an uncaught exception.
      await assert.rejects(reading, /deleted meanwhile/);
      await assert.rejects(writer.zip(entries([failing])), /deleted meanwhile/);
    });

    it('stops when the reader cancels half-way', async () => {
      const archive = await create().zip(entries([file('a.bin', new Uint8Array(1024 * 1024)), file('b.bin', new Uint8Array(1024 * 1024))]));
      const reader = archive.stream.getReader();
      await reader.read();
      await reader.cancel();
      assert.deepEqual(await reader.closed, undefined);
    });

    it('errors the archive when a file is not the size it was listed with', async () => {
      const grown = { ...file('grown.txt', 'longer than listed'), size: 4 };
      await assert.rejects(collect((await create().zip(entries([grown]))).stream));
    });

    it('rejects when the list of entries fails, before any byte', async () => {
      async function* failing(): AsyncIterable<ArchiveEntry> {
        yield file('a.txt', 'a');
        throw new Error('walk failed');
      }
      await assert.rejects(create().zip(failing()), /walk failed/);
    });

    it('an empty list is a valid empty zip', async () => {
      const archive = await create().zip(entries([]));
      const zip = await collect(archive.stream);
      assert.equal(zip.length, archive.size);
      assert.equal((await unzip(zip)).size, 0);
    });
  });
}

function file(path: string, content: string | Uint8Array): ArchiveEntry {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  return { path, type: 'file', mtime: new Date('2024-05-01T10:00:00Z'), size: bytes.byteLength, open: async () => streamOf(bytes) };
}

async function* entries(list: ArchiveEntry[]): AsyncIterable<ArchiveEntry> {
  yield* list;
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      if (bytes.length > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(stream).arrayBuffer());
}

/** Entries of a zip by name (directories end in '/'), in the archive's order, read with yauzl. */
export async function unzip(zip: Buffer): Promise<Map<string, Uint8Array>> {
  const archive = await new Promise<ZipFile>((resolve, reject) =>
    fromBuffer(zip, { lazyEntries: true }, (error, opened) => (error ? reject(error) : resolve(opened))),
  );
  const result = new Map<string, Uint8Array>();
  await new Promise<void>((resolve, reject) => {
    archive.on('error', reject);
    archive.on('end', () => resolve());
    archive.on('entry', (entry: Entry) => {
      if (entry.fileName.endsWith('/')) {
        result.set(entry.fileName, new Uint8Array(0));
        archive.readEntry();
        return;
      }
      archive.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          result.set(entry.fileName, Buffer.concat(chunks));
          archive.readEntry();
        });
      });
    });
    archive.readEntry();
  });
  return result;
}
