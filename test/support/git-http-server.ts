import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Who the seeding and "someone else" commits are by, so no global git identity is needed. */
const CLI_IDENTITY = ['-c', 'user.name=Remote Tester', '-c', 'user.email=remote@example.test', '-c', 'init.defaultBranch=main'];

export interface GitHttpServerOptions {
  /** When set, every request needs HTTP Basic with exactly these credentials (401 otherwise). */
  credentials?: { username: string; password: string };
}

/**
 * Debian's `git http-backend` (the smart HTTP protocol, fetch and push) as CGI behind node:http on
 * 127.0.0.1, serving bare repositories from a temp folder. Seeding and inspection use the git CLI,
 * so what the server under test pushes is checked by a client that is not isomorphic-git.
 */
export class GitHttpServer {
  /** `Authorization` headers received, in order (undefined for a request without one). */
  readonly authorizations: (string | undefined)[] = [];

  private constructor(
    private readonly server: http.Server,
    /** The folder of the bare repositories (`GIT_PROJECT_ROOT`). */
    readonly root: string,
    readonly origin: string,
    private readonly credentials: GitHttpServerOptions['credentials'],
  ) {}

  static async start(options: GitHttpServerOptions = {}): Promise<GitHttpServer> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'git-http-'));
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const self = new GitHttpServer(server, root, `http://127.0.0.1:${port}`, options.credentials);
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => self.serve(request, response));
    return self;
  }

  /** The repository's URL as a client names it, without credentials. */
  url(name: string): string {
    return `${this.origin}/${name}.git`;
  }

  /** A bare repository on branch `main` that accepts pushes, with `files` in one first commit. */
  async createRepository(name: string, files: Record<string, string>): Promise<void> {
    const bare = this.barePath(name);
    await run('git', [...CLI_IDENTITY, 'init', '--quiet', '--bare', bare]);
    await run('git', ['-C', bare, 'config', 'http.receivepack', 'true']);
    await this.commitAsSomeoneElse(name, files, 'initial commit');
  }

  /** Another client's commit on `main`, pushed with the git CLI straight to the bare repository. */
  async commitAsSomeoneElse(name: string, files: Record<string, string>, message: string): Promise<string> {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'git-work-'));
    try {
      await run('git', [...CLI_IDENTITY, 'clone', '--quiet', this.barePath(name), work]);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
        fs.writeFileSync(path.join(work, file), content);
      }
      await run('git', ['-C', work, ...CLI_IDENTITY, 'checkout', '--quiet', '-B', 'main']);
      await run('git', ['-C', work, 'add', '--all']);
      await run('git', ['-C', work, ...CLI_IDENTITY, 'commit', '--quiet', '-m', message]);
      await run('git', ['-C', work, 'push', '--quiet', 'origin', 'main']);
      return (await run('git', ['-C', work, 'rev-parse', 'HEAD'])).stdout.trim();
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }

  /**
   * A plain `git clone` over HTTP of the repository into a temp folder (removed by the caller),
   * authenticating like any git client when the server wants credentials.
   */
  async cloneWithCli(name: string): Promise<string> {
    const into = fs.mkdtempSync(path.join(os.tmpdir(), 'git-cli-clone-'));
    const auth = this.credentials
      ? ['-c', `http.extraHeader=Authorization: Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}`]
      : [];
    await run('git', [...auth, 'clone', '--quiet', this.url(name), into]);
    return into;
  }

  /** `git log` of `main` in the bare repository: one `<hash> <subject>` per commit, newest first. */
  async log(name: string): Promise<string[]> {
    const { stdout } = await run('git', ['-C', this.barePath(name), 'log', '--format=%H %s', 'main']);
    return stdout.trim().split('\n');
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) =>
      this.server.close(() => {
        fs.rmSync(this.root, { recursive: true, force: true });
        resolve();
      }),
    );
  }

  private barePath(name: string): string {
    return path.join(this.root, `${name}.git`);
  }

  private serve(request: http.IncomingMessage, response: http.ServerResponse): void {
    this.authorizations.push(request.headers.authorization);
    if (this.credentials && !this.authorized(request.headers.authorization)) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' }).end('authentication required\n');
      return;
    }
    const url = new URL(request.url ?? '/', this.origin);
    const backend = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        HOME: this.root,
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: '1',
        // http-backend enables receive-pack (push) only for an authenticated user.
        REMOTE_USER: this.credentials?.username ?? 'tester',
        REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
        REQUEST_METHOD: request.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        ...(request.headers['content-length'] ? { CONTENT_LENGTH: request.headers['content-length'] } : {}),
        ...(request.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: request.headers['content-encoding'] } : {}),
        ...(typeof request.headers['git-protocol'] === 'string' ? { GIT_PROTOCOL: request.headers['git-protocol'] } : {}),
      },
    });
    request.pipe(backend.stdin);
    backend.on('error', () => response.destroy());
    relayCgiResponse(backend.stdout, response);
  }

  private authorized(header: string | undefined): boolean {
    const expected = `Basic ${Buffer.from(`${this.credentials!.username}:${this.credentials!.password}`).toString('base64')}`;
    return header === expected;
  }
}

/** Writes a CGI program's output as the HTTP response: its header block (with `Status:`), then the body. */
function relayCgiResponse(output: NodeJS.ReadableStream, response: http.ServerResponse): void {
  let head = Buffer.alloc(0);
  let headersDone = false;
  output.on('data', (chunk: Buffer) => {
    if (headersDone) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const text = head.toString('latin1');
    const crlf = text.indexOf('\r\n\r\n');
    const lf = text.indexOf('\n\n');
    const end = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf + 4 : lf !== -1 ? lf + 2 : -1;
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of text.slice(0, end).split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'status') status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    response.writeHead(status, headers);
    response.write(head.subarray(end));
  });
  output.on('end', () => {
    if (!headersDone) response.writeHead(502);
    response.end();
  });
}
