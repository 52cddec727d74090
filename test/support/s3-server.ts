import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

/** s3rver's one account: what a client signs its requests with. */
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/**
 * A local S3-compatible server (s3rver, in this process, on a free port of 127.0.0.1) keeping its
 * objects in a temp folder, with the `buckets` made empty at start. It refuses an access key id
 * other than its own as S3 would (InvalidAccessKeyId); it does not check V4 signatures.
 */
export class S3Server {
  private constructor(
    private readonly server: S3rver,
    /** `http://127.0.0.1:<port>`: the `--s3-endpoint`. */
    readonly endpoint: string,
    /** The folder holding the objects: `<directory>/<bucket>/<key>._S3rver_object`. */
    readonly directory: string,
  ) {}

  static async start(buckets: string[] = ['runloom-test']): Promise<S3Server> {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 's3rver-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
    const { port } = await server.run();
    return new S3Server(server, `http://127.0.0.1:${port}`, directory);
  }

  /** The files of the objects stored in `bucket` under `prefix`, relative to the bucket: what the server holds, seen without S3. */
  objectFiles(bucket: string, prefix = ''): string[] {
    const root = path.join(this.directory, bucket);
    if (!fs.existsSync(root)) return [];
    return (fs.readdirSync(root, { recursive: true }) as string[])
      .filter((entry) => entry.endsWith('._S3rver_object'))
      .map((entry) => entry.slice(0, -'._S3rver_object'.length).split(path.sep).join('/'))
      .filter((key) => key.startsWith(prefix))
      .sort();
  }

  /** Sets an object's last-modified time, as S3 reports it, to `when`. */
  age(bucket: string, key: string, when: Date): void {
    const file = path.join(this.directory, bucket, `${key}._S3rver_object`);
    fs.utimesSync(file, when, when);
  }

  async stop(): Promise<void> {
    await this.server.close();
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}
