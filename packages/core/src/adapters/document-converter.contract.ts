import { strict as assert } from 'node:assert';
import { ZipFile } from 'yazl';
import { ConversionFailedError, type DocumentConverter } from '../ports/document-converter';

/**
 * The behaviour every `DocumentConverter` adapter must have; each adapter's test file runs it.
 * Conversions are real (LibreOffice for the default adapter), so each case allows them time.
 */
export function documentConverterContract(name: string, create: () => DocumentConverter): void {
  describe(`DocumentConverter contract: ${name}`, function () {
    this.timeout(180_000);

    it('converts a DOCX to a PDF, readable whole and by byte range', async () => {
      const converted = await create().toPdf(streamOf(await minimalDocx('Hello from the contract')), 'docx');
      const pdf = await bytesOf(await converted.read());
      assert.equal(pdf.length, converted.size);
      assert.equal(Buffer.from(pdf.subarray(0, 5)).toString('latin1'), '%PDF-');
      const head = await bytesOf(await converted.read({ start: 1, end: 3 }));
      assert.equal(Buffer.from(head).toString('latin1'), 'PDF');
      assert.match(converted.sourceSha256, /^[0-9a-f]{64}$/);
    });

    it('answers the same cached PDF for the same source, also asked for twice at once', async () => {
      const converter = create();
      const docx = await minimalDocx('Cached once');
      const [first, second] = await Promise.all([converter.toPdf(streamOf(docx), 'docx'), converter.toPdf(streamOf(docx), 'docx')]);
      const third = await converter.toPdf(streamOf(docx), 'docx');
      assert.equal(first.sourceSha256, second.sourceSha256);
      assert.equal(third.sourceSha256, first.sourceSha256);
      assert.deepEqual(await bytesOf(await third.read()), await bytesOf(await first.read()));
    });

    it('refuses bytes that are no document with ConversionFailedError', async () => {
      await assert.rejects(create().toPdf(streamOf(new Uint8Array(2048).fill(0)), 'docx'), ConversionFailedError);
    });
  });
}

/**
 * The smallest DOCX Word and LibreOffice open: a zip of the content types, the package relation
 * and one paragraph of `text` (ECMA-376 part 1, WordprocessingML).
 */
export async function minimalDocx(text: string): Promise<Uint8Array> {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const parts: Record<string, string> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      '</Types>',
    '_rels/.rels':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
      '</Relationships>',
    'word/document.xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
      '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
      `<w:body><w:p><w:r><w:t>${escaped}</w:t></w:r></w:p></w:body></w:document>`,
  };
  const zip = new ZipFile();
  for (const [name, content] of Object.entries(parts)) zip.addBuffer(Buffer.from(content, 'utf8'), name, { mtime: new Date('2024-01-01T00:00:00Z') });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
