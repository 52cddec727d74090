import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConversionFailedError, ConverterUnavailableError } from '../../ports/document-converter';
import { documentConverterContract, minimalDocx } from '../document-converter.contract';
import { SofficeDocumentConverter } from './soffice-document-converter';

const scratch: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-pdf-'));
  scratch.push(dir);
  return dir;
}
after(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

documentConverterContract('SofficeDocumentConverter (LibreOffice)', () => new SofficeDocumentConverter({ cacheDir: tempDir() }));

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** A stand-in for soffice: logs each call, then runs `body` (sh) with $OUT the --outdir. */
function fakeSoffice(body: string): { binary: string; calls: () => number } {
  const dir = tempDir();
  const log = path.join(dir, 'calls.log');
  const binary = path.join(dir, 'soffice');
  fs.writeFileSync(
    binary,
    `#!/bin/sh\necho call >> '${log}'\nwhile [ "$1" != "--outdir" ]; do shift; done\nOUT="$2"\nmkdir -p "$OUT"\n${body}\n`,
    { mode: 0o755 },
  );
  return { binary, calls: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0) };
}

describe('SofficeDocumentConverter', function () {
  this.timeout(30_000);

  it('without the program: ConverterUnavailableError saying to install libreoffice-writer', async () => {
    const converter = new SofficeDocumentConverter({ cacheDir: tempDir(), binary: path.join(tempDir(), 'no-such-soffice') });
    await assert.rejects(converter.toPdf(streamOf(await minimalDocx('x')), 'docx'), (error: Error) => {
      assert.ok(error instanceof ConverterUnavailableError);
      assert.match(error.message, /libreoffice-writer/);
      return true;
    });
  });

  it('runs one conversion for sources asked for at once, then serves the cache', async () => {
    const fake = fakeSoffice(`sleep 0.3\nprintf '%%PDF-1.4 fake' > "$OUT/source.pdf"`);
    const converter = new SofficeDocumentConverter({ cacheDir: tempDir(), binary: fake.binary });
    const docx = await minimalDocx('once');
    await Promise.all([1, 2, 3].map(() => converter.toPdf(streamOf(docx), 'docx')));
    await converter.toPdf(streamOf(docx), 'docx');
    assert.equal(fake.calls(), 1);
    await converter.toPdf(streamOf(await minimalDocx('another')), 'docx');
    assert.equal(fake.calls(), 2);
  });

  it('stops a conversion past the time limit and caches nothing', async () => {
    const fake = fakeSoffice('sleep 30');
    const cacheDir = tempDir();
    const converter = new SofficeDocumentConverter({ cacheDir, binary: fake.binary, timeoutMs: 300 });
    await assert.rejects(converter.toPdf(streamOf(await minimalDocx('slow')), 'docx'), (error: Error) => {
      assert.ok(error instanceof ConversionFailedError);
      assert.match(error.message, /longer than/);
      return true;
    });
    assert.deepEqual(fs.readdirSync(cacheDir), []);
  });
});
