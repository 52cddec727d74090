import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { type BlobStat, BlobNotFoundError, type BlobStore, BlobStoreError, BlobTooLargeError, type ByteRange, type StoredBlob } from '../../ports/blob-store';
import type { Logger } from '../../ports/logger';
import { isBlobKey, newBlobKey } from '../blob-keys';
import type { S3Location } from './s3-location';

type S3Sdk = typeof import('./s3');
let loadedSdk: Promise<S3Sdk> | undefined;

/** The SDK, loaded on the first request of the first S3 store (see `s3.ts`). */
function importS3(): Promise<S3Sdk> {
  loadedSdk ??= import('./s3');
  return loadedSdk;
}

/** S3's minimum part size (every part but the last); the uploader refuses smaller ones. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** The largest object one CopyObject copies, which a multipart put's last step is. */
const MAX_COPY_BYTES = 5 * 1024 * 1024 * 1024;
/** Temporary objects older than this at start belong to uploads that a crash cut off. */
const STALE_TEMP_MS = 60 * 60 * 1000;

export interface S3BlobStoreOptions extends S3Location {
  /** An S3-compatible service (MinIO, Ceph, R2, …), addressed path-style; undefined: AWS S3. */
  endpoint?: string;
  /** Undefined: AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1 with an `endpoint`. */
  region?: string;
  /** Undefined: the SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, an instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Bytes per part of a multipart upload, at least 5 MiB; a body up to one part is one PutObject. */
  partSize?: number;
  /** Where a failed sweep of temporary objects is told. */
  logger?: Logger;
}

/**
 * Blobs as objects of an S3-compatible bucket, under `prefix`: `<prefix>ab/cd/<sha256>-<random>`.
 *
 * A put hashes the body while it streams it. A body up to one part is buffered (one part, as the
 * multipart uploader would) and sent by one PutObject to its final key. A larger one goes by a
 * multipart upload to `<prefix>tmp/<random>` (the key must be named before the hash is known), is
 * copied to its final key, and the temporary object deleted. S3 shows an object only once its
 * PutObject, CompleteMultipartUpload or CopyObject has succeeded, so nothing is ever visible
 * half-written under a key. At most about 3 parts of a body are in memory at once.
 *
 * Every failed request is an `S3RequestError` naming the operation and the service's error code,
 * never a credential. The SDK is loaded on the first request.
 */
export class S3BlobStore implements BlobStore {
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partSize: number;
  private client: Promise<{ sdk: S3Sdk; client: S3Client }> | undefined;
  private swept: Promise<void> | undefined;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix;
    this.partSize = options.partSize ?? MIN_PART_BYTES;
    if (this.partSize < MIN_PART_BYTES) throw new Error(`partSize must be at least ${MIN_PART_BYTES} bytes (S3's minimum part size)`);
  }

  async put(content: ReadableStream<Uint8Array>, { maxBytes }: { maxBytes: number }): Promise<StoredBlob> {
    // Over 5 GiB a put would need a multipart copy: refused as too large, before anything is read.
    const limit = Math.min(maxBytes, MAX_COPY_BYTES);
    const source = new HashingSource(content, limit);
    try {
      const { sdk, client } = await this.connect();
      // Once, before the first put: never fails (a failed sweep is logged).
      await (this.swept ??= this.sweepStaleTemporaries(sdk, client));
      const head = await source.readUpTo(this.partSize);
      if (head.ended) {
        const key = newBlobKey(source.sha256());
        const body = Buffer.concat(head.chunks);
        await this.send('PutObject', key, () => client.send(new sdk.PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: body, ContentLength: body.byteLength })));
        return { key, sha256: source.sha256(), size: source.size, bucket: this.bucket };
      }
      return await this.putInParts(sdk, client, source, head.chunks);
    } catch (error) {
      await source.cancel();
      throw source.failure ?? error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const objectKey = this.objectKey(key);
    const { sdk, client } = await this.connect();
    try {
      const request = { Bucket: this.bucket, Key: objectKey, Range: range ? `bytes=${range.start}-${range.end}` : undefined };
      const answer = await this.send('GetObject', key, () => client.send(new sdk.GetObjectCommand(request)));
      if (!answer.Body) throw new S3RequestError('GetObject', key, 'NoBody');
      return answer.Body.transformToWebStream() as ReadableStream<Uint8Array>;
    } catch (error) {
      if (error instanceof S3RequestError && error.status === 404) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    const objectKey = this.objectKey(key);
    const { sdk, client } = await this.connect();
    try {
      const answer = await this.send('HeadObject', key, () => client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: objectKey })));
      return { key, size: answer.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof S3RequestError && error.status === 404) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    const { sdk, client } = await this.connect();
    // S3 answers a delete of a missing key with success, as the port asks.
    await this.send('DeleteObject', key, () => client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey })));
  }

  /** Stops the client's connections; the store is not used afterwards. */
  async close(): Promise<void> {
    if (this.client) (await this.client).client.destroy();
  }

  /** A body over one part: multipart into a temporary object, copied to its final key once hashed. */
  private async putInParts(sdk: S3Sdk, client: S3Client, source: HashingSource, head: Uint8Array[]): Promise<StoredBlob> {
    const tempKey = `${this.prefix}tmp/${randomBytes(16).toString('hex')}`;
    async function* body(): AsyncGenerator<Uint8Array> {
      yield* head.splice(0);
      for (let chunk = await source.next(); chunk !== undefined; chunk = await source.next()) yield chunk;
    }
    // Two parts in flight: as fast as one connection gets, with at most ~3 parts in memory.
    const upload = new sdk.Upload({ client, params: { Bucket: this.bucket, Key: tempKey, Body: Readable.from(body()) }, partSize: this.partSize, queueSize: 2 });
    try {
      await upload.done();
    } catch (error) {
      // The source's own failure wins over what the aborted upload reported.
      throw source.failure ?? toS3RequestError('MultipartUpload', tempKey, error);
    }
    const key = newBlobKey(source.sha256());
    const copySource = `${this.bucket}/${tempKey.split('/').map(encodeURIComponent).join('/')}`;
    try {
      await this.send('CopyObject', key, () => client.send(new sdk.CopyObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, CopySource: copySource })));
    } finally {
      // A temporary object this fails to delete is swept at a later start (or by a lifecycle rule).
      await this.send('DeleteObject', tempKey, () => client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: tempKey }))).catch((error: unknown) =>
        this.options.logger?.warn({ error: (error as Error).message }, 'could not delete a temporary S3 object'),
      );
    }
    return { key, sha256: source.sha256(), size: source.size, bucket: this.bucket };
  }

  /** Deletes `<prefix>tmp/` objects over an hour old: uploads that a crash cut off between upload and copy. */
  private async sweepStaleTemporaries(sdk: S3Sdk, client: S3Client): Promise<void> {
    const cutoff = Date.now() - STALE_TEMP_MS;
    const tempPrefix = `${this.prefix}tmp/`;
    try {
      let token: string | undefined;
      do {
        const request = { Bucket: this.bucket, Prefix: tempPrefix, ContinuationToken: token };
        const page = await this.send('ListObjectsV2', tempPrefix, () => client.send(new sdk.ListObjectsV2Command(request)));
        for (const object of page.Contents ?? []) {
          if (object.Key && object.LastModified && object.LastModified.getTime() < cutoff) {
            await this.send('DeleteObject', object.Key, () => client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: object.Key })));
          }
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
    } catch (error) {
      // Garbage left, nothing lost: puts go on; a bucket lifecycle rule on tmp/ is the backstop.
      this.options.logger?.warn({ error: (error as Error).message }, 'could not sweep stale temporary S3 objects');
    }
  }

  /** Keys come from `put`; checking their shape keeps every request inside the prefix. */
  private objectKey(key: string): string {
    if (!isBlobKey(key)) throw new BlobNotFoundError(key);
    return this.prefix + key;
  }

  private connect(): Promise<{ sdk: S3Sdk; client: S3Client }> {
    this.client ??= importS3().then((sdk) => {
      const { endpoint, credentials } = this.options;
      const region = this.options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? (endpoint === undefined ? undefined : 'us-east-1');
      const client = new sdk.S3Client({
        region,
        endpoint,
        // Compatible services are addressed as endpoint/bucket/key: no DNS name per bucket needed.
        forcePathStyle: endpoint !== undefined,
        credentials,
        // Checksums only where S3 requires them: compatible services differ in the newer ones.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      return { sdk, client };
    });
    return this.client;
  }

  /** `request`, its failure an `S3RequestError`. */
  private async send<Output>(operation: string, key: string, request: () => Promise<Output>): Promise<Output> {
    try {
      return await request();
    } catch (error) {
      throw toS3RequestError(operation, key, error);
    }
  }
}

/**
 * A request to the S3 service failed: the message names the operation, the key and the service's
 * error code with a hint, never a credential, a signature or the service's own text; no cause is
 * kept, so a logger that walks causes finds none either.
 */
export class S3RequestError extends BlobStoreError {
  override readonly name = 'S3RequestError';

  constructor(
    readonly operation: string,
    readonly key: string,
    /** The service's error code (NoSuchBucket, AccessDenied, …) or the network's (ECONNREFUSED, …). */
    readonly code: string,
    /** The HTTP status of the service's answer; undefined when none came. */
    readonly status?: number,
  ) {
    const hint = HINTS[code];
    super(`S3 ${operation} of ${key} failed: ${code}${status === undefined ? '' : ` (HTTP ${status})`}${hint ? `: ${hint}` : ''}`);
  }
}

const HINTS: Record<string, string> = {
  CredentialsProviderError: 'no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
  InvalidAccessKeyId: 'the service does not know AWS_ACCESS_KEY_ID',
  SignatureDoesNotMatch: 'the service refused the signature: check AWS_SECRET_ACCESS_KEY',
  AccessDenied: 'the credentials may not do this on the bucket',
  NoSuchBucket: 'the bucket of --blob-store does not exist',
  ECONNREFUSED: 'nothing answers at the S3 endpoint',
  ENOTFOUND: 'the S3 endpoint host name does not resolve',
};

function toS3RequestError(operation: string, key: string, error: unknown): S3RequestError {
  if (error instanceof S3RequestError) return error;
  const failure = error as { name?: string; code?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  const status = failure.$metadata?.httpStatusCode;
  // Service errors carry their code as the name; network errors as `code` on a plain Error.
  const code = failure.Code ?? (typeof failure.code === 'string' ? failure.code : undefined) ?? failure.name ?? 'Error';
  return new S3RequestError(operation, key, /^[\w.-]{1,64}$/.test(code) ? code : 'Error', status);
}

/**
 * The put's body, read chunk by chunk: hashes and counts what it reads and stops at `limit`
 * (`BlobTooLargeError`, the source cancelled). `failure` keeps the source's own failure, which a
 * put reports rather than what S3 said about the upload it cut short.
 */
class HashingSource {
  size = 0;
  failure: unknown;
  private readonly hash = createHash('sha256');
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private ended = false;
  private digest: string | undefined;

  constructor(
    content: ReadableStream<Uint8Array>,
    private readonly limit: number,
  ) {
    this.reader = content.getReader();
  }

  /** The next chunk; undefined at the end. */
  async next(): Promise<Uint8Array | undefined> {
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await this.reader.read();
    } catch (error) {
      this.failure = error;
      this.ended = true;
      throw error;
    }
    if (read.done) {
      this.ended = true;
      return undefined;
    }
    this.size += read.value.byteLength;
    if (this.size > this.limit) {
      this.failure = new BlobTooLargeError(this.limit);
      await this.cancel();
      throw this.failure;
    }
    this.hash.update(read.value);
    return read.value;
  }

  /** Chunks until more than `bytes` are read or the source ends (`ended`). */
  async readUpTo(bytes: number): Promise<{ chunks: Uint8Array[]; ended: boolean }> {
    const chunks: Uint8Array[] = [];
    let read = 0;
    while (read <= bytes) {
      const chunk = await this.next();
      if (chunk === undefined) return { chunks, ended: true };
      chunks.push(chunk);
      read += chunk.byteLength;
    }
    return { chunks, ended: false };
  }

  sha256(): string {
    this.digest ??= this.hash.digest('hex');
    return this.digest;
  }

  /** Stops reading the source (a client's upload) once the put has failed. */
  async cancel(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.reader.cancel().catch(() => undefined);
  }
}
