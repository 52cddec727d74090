import assert from 'node:assert/strict';
import { fromBuffer, type Entry, type ZipFile } from 'yauzl';
import type { ArchiveEntry, ArchiveWriter } from '../ports/archive-writer';

/** The behaviour every `ArchiveWriter` adapter must have; each adapter's test file runs it. */
export function archiveWriterContract(name: string, create: () => ArchiveWriter): void {
  describe(`ArchiveWriter contract: ${name}`, () => {
    it('writes a zip whose entries read back with their paths, contents and directories', async () => {
      const big = new Uint8Array(3 * 1024 * 1024).map((_, index) => (index * 31) % 251);
      const zip = await collect(
        create().zip(
          entries([
            { path: 'docs', type: 'directory', mtime: new Date('2024-05-01T10:00:00Z') },
            file('docs/a.txt', 'hello'),
            file('docs/empty.txt', ''),
            file('big.bin', big),
            file('ünï cöde.txt', 'text'),
          ]),
        ),
      );
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
        open: async () => {
          opened.push(path);
          return streamOf(new Uint8Array(64 * 1024));
        },
      });
      const reader = create().zip(entries([tracked('1'), tracked('2'), tracked('3')])).getReader();
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
        open: async () => new ReadableStream({ pull: (controller) => controller.error(new Error('disk gone')) }),
      };
      await assert.rejects(collect(create().zip(entries([file('ok.txt', 'ok'), failing]))), /disk gone/);
    });

    it('an empty list is a valid empty zip', async () => {
      assert.equal((await unzip(await collect(create().zip(entries([]))))).size, 0);
    });
  });
}

function file(path: string, content: string | Uint8Array): ArchiveEntry {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  return { path, type: 'file', mtime: new Date('2024-05-01T10:00:00Z'), open: async () => streamOf(bytes) };
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
