import { strict as assert } from 'node:assert';
import { MultipartError, type MultipartLimits, type MultipartParser, type MultipartPart } from '../ports/multipart-parser';
import { patterned, readAll, streamOf } from './blob-store.contract';

const LIMITS: MultipartLimits = { fieldBytes: 1_000, fields: 10, parts: 11 };
const BOUNDARY = 'runloom-test-boundary';
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

type FormPart = { name: string; value: string } | { name: string; filename?: string; contentType?: string; bytes: Uint8Array };

/** A multipart body written out by hand, so the parser under test is not also the encoder. */
export function multipartBody(parts: FormPart[], boundary = BOUNDARY): Uint8Array {
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
      continue;
    }
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.contentType === undefined ? '' : `Content-Type: ${part.contentType}\r\n`;
    chunks.push(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\n${type}\r\n`));
    chunks.push(part.bytes, encoder.encode('\r\n'));
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`));
  return new Uint8Array(Buffer.concat(chunks));
}

/** Reads every part, file contents in full, as the resources feature does. */
async function collect(parts: AsyncIterable<MultipartPart>): Promise<({ kind: 'field'; name: string; value: string } | { kind: 'file'; name: string; filename: string | undefined; mimeType: string; bytes: Uint8Array })[]> {
  const collected = [];
  for await (const part of parts) {
    if (part.kind === 'field') collected.push(part);
    else collected.push({ kind: part.kind, name: part.name, filename: part.filename, mimeType: part.mimeType, bytes: await readAll(part.content) });
  }
  return collected;
}

/** The one contract every `MultipartParser` adapter passes. */
export function multipartParserContract(name: string, make: () => MultipartParser): void {
  describe(`MultipartParser contract: ${name}`, () => {
    it('hands out fields and the file in body order, fields before and after the file', async () => {
      const bytes = patterned(200_000);
      const body = multipartBody([
        { name: 'name', value: 'report.pdf' },
        { name: 'file', filename: 'r.pdf', contentType: 'application/pdf', bytes },
        { name: 'tags', value: 'a' },
        { name: 'tags', value: 'ü-b' },
      ]);
      const parts = await collect(make().parse(streamOf(body, 1_337), CONTENT_TYPE, LIMITS));
      assert.deepEqual(parts, [
        { kind: 'field', name: 'name', value: 'report.pdf' },
        { kind: 'file', name: 'file', filename: 'r.pdf', mimeType: 'application/pdf', bytes },
        { kind: 'field', name: 'tags', value: 'a' },
        { kind: 'field', name: 'tags', value: 'ü-b' },
      ]);
    });

    it('treats a part named file as the file even without a filename or content type', async () => {
      const bytes = new TextEncoder().encode('plain words');
      const parts = await collect(make().parse(streamOf(multipartBody([{ name: 'file', bytes }]), 5), CONTENT_TYPE, LIMITS));
      assert.equal(parts.length, 1);
      assert.equal(parts[0]!.kind, 'file');
    });

    it('rejects a field over the size limit with MultipartError naming the field', async () => {
      const body = multipartBody([{ name: 'metadata', value: 'x'.repeat(LIMITS.fieldBytes + 1) }]);
      await assert.rejects(collect(make().parse(streamOf(body, 500), CONTENT_TYPE, LIMITS)), (error: unknown) => {
        assert.ok(error instanceof MultipartError);
        assert.match(error.message, /metadata/);
        return true;
      });
    });

    it('rejects more fields than the limit', async () => {
      const fields = Array.from({ length: LIMITS.fields + 1 }, (_, index) => ({ name: `f${index}`, value: 'v' }));
      await assert.rejects(collect(make().parse(streamOf(multipartBody(fields), 500), CONTENT_TYPE, LIMITS)), MultipartError);
    });

    it('rejects a content type without a boundary, and a body cut off inside the file', async () => {
      await assert.rejects(collect(make().parse(streamOf(new Uint8Array(0), 1), 'multipart/form-data', LIMITS)), MultipartError);
      const whole = multipartBody([{ name: 'file', filename: 'f', bytes: patterned(50_000) }]);
      const truncated = whole.subarray(0, 30_000);
      await assert.rejects(collect(make().parse(streamOf(truncated, 4_000), CONTENT_TYPE, LIMITS)), MultipartError);
    });

    it('releases the body when the consumer stops early', async () => {
      let cancelled = false;
      const body = multipartBody([{ name: 'file', filename: 'f', bytes: patterned(2_000_000) }]);
      for await (const part of make().parse(streamOf(body, 16_384, () => (cancelled = true)), CONTENT_TYPE, LIMITS)) {
        assert.equal(part.kind, 'file');
        break;
      }
      assert.ok(cancelled);
    });
  });
}
