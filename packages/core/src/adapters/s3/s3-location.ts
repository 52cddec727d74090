/**
 * Where an S3-compatible blob store keeps blobs: `s3://bucket/prefix` (the `blobStore` option,
 * `--blob-store`) and the service's URL (`s3Endpoint`, `--s3-endpoint`). Checked at start, so a
 * typo is a clear refusal rather than a failed upload later.
 */
export interface S3Location {
  bucket: string;
  /** '' or ending in '/': every key of the store starts with it. */
  prefix: string;
}

/** Whether `text` names an S3 blob store (else it is a local folder). */
export function isS3Url(text: string): boolean {
  return /^s3:\/\//i.test(text);
}

/** `s3://bucket` or `s3://bucket/some/prefix`; throws an error saying what to fix. */
export function parseS3Location(text: string): S3Location {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/i.exec(text.trim());
  if (!match) throw new Error('must be s3://bucket or s3://bucket/prefix');
  const [, bucket = '', rawPrefix = ''] = match;
  // S3's bucket naming rules, which every compatible service accepts.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..')) {
    throw new Error('must name a bucket of 3–63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit');
  }
  const segments = rawPrefix.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (!/^[\w.!*'()-]+$/.test(segment) || segment === '.' || segment === '..') {
      throw new Error(`has a prefix segment '${segment}' that is not letters, digits and _ . ! * ' ( ) -`);
    }
  }
  return { bucket, prefix: segments.map((segment) => `${segment}/`).join('') };
}

/** An http(s) URL without credentials in it (those come from the AWS environment variables); throws saying what to fix. */
export function checkS3Endpoint(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('must be an http:// or https:// URL, e.g. http://127.0.0.1:9000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http:// or https:// URL, e.g. http://127.0.0.1:9000');
  if (url.username !== '' || url.password !== '') {
    throw new Error('must not hold credentials: give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  }
  return text;
}

/** Why `value` cannot be the blob store (a folder, or an s3:// URL), or undefined when it can. */
export function blobStoreProblem(value: string): string | undefined {
  if (isS3Url(value)) {
    try {
      parseS3Location(value);
    } catch (error) {
      return (error as Error).message;
    }
    return undefined;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return 'must be a folder path or an s3://bucket/prefix URL (no other remote store exists)';
  return undefined;
}
