import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, type ChildServer, fetchToken, median, startChildServer } from './child-server';

/**
 * Resource bytes through `runloom serve` (the built CLI in its own process) against a bare
 * node:http server in another process, on loopback, with the same client code for both:
 * (a) raw upload of 50 MB (`POST /v1/resources?name=`), bare: the body piped to /dev/null;
 * (b) the same 50 MB as a multipart form, bare: the body piped to /dev/null;
 * (c) download of the 50 MB (`GET /v1/resource/{id}/content`), bare: the same file streamed;
 * (d) peak RSS (VmHWM) of a fresh server process during a 500 MB multipart upload.
 * Runloom writes every upload to disk, fsyncs it and hashes it; the bare server does neither, so
 * (e) repeats (a) against a bare server that writes and fsyncs the file: the cost of durability alone.
 * Each throughput is the median of ROUNDS transfers, the two servers taking turns.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const MB = 1024 * 1024;
const SIZE = 50 * MB;
const BIG_SIZE = 500 * MB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CHUNK = 64 * 1024;
const BOUNDARY = 'runloom-bench-boundary';
const CLIENT = { account: 'acct-bench', id: 'bench-resources', secret: 'bench-resources-secret-0123456789' };

/** The bare baseline (also of bench/workspace-files.bench.ts): uploads go to BARE_SINK (/dev/null, or a file that is fsynced), downloads stream BARE_FILE. */
export const BARE_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': fs.statSync(process.env.BARE_FILE).size });
    fs.createReadStream(process.env.BARE_FILE).pipe(res);
    return;
  }
  const sink = fs.createWriteStream(process.env.BARE_SINK);
  req.pipe(sink);
  sink.on('finish', () => {
    const done = () => { res.writeHead(201, { 'content-type': 'application/json' }); res.end('{}'); };
    if (process.env.BARE_SINK === '/dev/null') return done();
    const fd = fs.openSync(process.env.BARE_SINK, 'r+');
    fs.fsync(fd, () => { fs.closeSync(fd); done(); });
  });
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;

export async function runResourcesBench(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  if (process.platform !== 'linux') throw new Error('the RSS figure reads /proc: run this bench on Linux');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-resources-'));
  const content = patterned(SIZE);
  const contentFile = path.join(workDir, 'content.bin');
  fs.writeFileSync(contentFile, content);
  const servers: ChildServer[] = [];
  try {
    const runloom = await startRunloom(workDir);
    servers.push(runloom);
    const bareNull = await startChildServer(['-e', BARE_SERVER], workDir, { BARE_SINK: '/dev/null', BARE_FILE: contentFile });
    servers.push(bareNull);
    const bareDisk = await startChildServer(['-e', BARE_SERVER], workDir, { BARE_SINK: path.join(workDir, 'bare-upload.bin'), BARE_FILE: contentFile });
    servers.push(bareDisk);
    const authorization = `Bearer ${await fetchToken(runloom.url, CLIENT)}`;

    const raw = (url: string) => upload(`${url}/v1/resources?name=bench.bin`, authorization, 'application/octet-stream', SIZE, rawBody(content));
    const form = (url: string) =>
      upload(`${url}/v1/resources`, authorization, `multipart/form-data; boundary=${BOUNDARY}`, multipartLength(SIZE), multipartBody(content));
    const stored = JSON.parse(await raw(runloom.url).then((result) => result.body)) as { id: string; sha256: string };

    const rawUpload = await alternate(
      () => raw(runloom.url),
      () => raw(bareNull.url),
    );
    const formUpload = await alternate(
      () => form(runloom.url),
      () => form(bareNull.url),
    );
    const download = await alternate(
      () => fetchBytes(`${runloom.url}/v1/resource/${stored.id}/content`, authorization),
      () => fetchBytes(bareNull.url, authorization),
    );
    const durableUpload = await alternate(
      () => raw(runloom.url),
      () => raw(bareDisk.url),
    );
    for (const server of servers.splice(0)) await server.stop();

    const peakRssMb = await peakRssDuringUpload(workDir);
    const throughput = (ms: number): number => SIZE / MB / (ms / 1000);
    return [
      benchResult({
        name: '(a) 50 MB raw upload: runloom serve / bare node:http to /dev/null',
        value: throughput(rawUpload.subject),
        baseline: throughput(rawUpload.baseline),
        goal: { of: 'ratio', atLeast: 0.7 },
        unit: 'MB/s',
      }),
      benchResult({
        name: '(b) 50 MB multipart upload: runloom serve / bare node:http to /dev/null',
        value: throughput(formUpload.subject),
        baseline: throughput(formUpload.baseline),
        goal: { of: 'ratio', atLeast: 0.7 },
        unit: 'MB/s',
      }),
      benchResult({
        name: '(c) 50 MB download: runloom serve / bare node:http streaming the file',
        value: throughput(download.subject),
        baseline: throughput(download.baseline),
        goal: { of: 'ratio', atLeast: 0.7 },
        unit: 'MB/s',
      }),
      benchResult({
        name: '(d) peak RSS of runloom serve during a 500 MB multipart upload (baseline: its RSS just before)',
        value: peakRssMb.peak,
        baseline: peakRssMb.atStart,
        goal: { of: 'value', atMost: 150 },
        unit: 'MB',
      }),
      benchResult({
        name: '(e) 50 MB raw upload: runloom serve / bare node:http writing and fsyncing the file (no goal: what durability costs)',
        value: throughput(durableUpload.subject),
        baseline: throughput(durableUpload.baseline),
        goal: null,
        unit: 'MB/s',
      }),
    ];
  } finally {
    for (const server of servers) await server.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

export { runResourcesBench as run };

/** Median milliseconds of each side over ROUNDS, taking turns so load changes hit both alike; one warm-up each. */
export async function alternate(subject: () => Promise<Transfer>, baseline: () => Promise<Transfer>): Promise<{ subject: number; baseline: number }> {
  await subject();
  await baseline();
  const times: { subject: number[]; baseline: number[] } = { subject: [], baseline: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    times.subject.push((await subject()).ms);
    times.baseline.push((await baseline()).ms);
  }
  return { subject: median(times.subject), baseline: median(times.baseline) };
}

export interface Transfer {
  ms: number;
  body: string;
}

/** POSTs `length` bytes from `chunks` with backpressure; fails unless the answer is 201. */
export function upload(url: string, authorization: string, contentType: string, length: number, chunks: () => Iterable<Uint8Array>): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(url, {
      method: 'POST',
      headers: { authorization, 'content-type': contentType, 'content-length': length },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (chunk: Buffer) => parts.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(parts).toString();
        if (response.statusCode !== 201) reject(new Error(`POST ${url} answered ${response.statusCode}: ${body}`));
        else resolve({ ms: performance.now() - started, body });
      });
    });
    const source = chunks()[Symbol.iterator]();
    const pump = (): void => {
      for (let next = source.next(); !next.done; next = source.next()) {
        if (!request.write(next.value)) {
          request.once('drain', pump);
          return;
        }
      }
      request.end();
    };
    pump();
  });
}

/** GETs `url`, counting and dropping the bytes; fails unless all SIZE bytes arrive with a 200. */
export function fetchBytes(url: string, authorization: string): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http
      .get(url, { headers: { authorization } }, (response) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => (received += chunk.length));
        response.on('end', () => {
          if (response.statusCode !== 200 || received !== SIZE) reject(new Error(`GET ${url} answered ${response.statusCode} with ${received} bytes`));
          else resolve({ ms: performance.now() - started, body: '' });
        });
      })
      .on('error', reject);
  });
}

export function rawBody(content: Uint8Array): () => Iterable<Uint8Array> {
  return function* () {
    for (let offset = 0; offset < content.byteLength; offset += CHUNK) yield content.subarray(offset, offset + CHUNK);
  };
}

const FORM_HEAD = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nbench.bin\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
);
const FORM_TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

function multipartLength(size: number): number {
  return FORM_HEAD.byteLength + size + FORM_TAIL.byteLength;
}

function multipartBody(content: Uint8Array): () => Iterable<Uint8Array> {
  return function* () {
    yield FORM_HEAD;
    yield* rawBody(content)();
    yield FORM_TAIL;
  };
}

/**
 * One 500 MB multipart upload, streamed from a repeated 1 MB block, to a fresh server: its RSS
 * just before, and its peak RSS during the upload (VmHWM, reset to the current RSS through
 * /proc/PID/clear_refs right before, so the start-up peak does not count), in MB.
 */
async function peakRssDuringUpload(workDir: string): Promise<{ atStart: number; peak: number }> {
  const server = await startRunloom(workDir);
  try {
    const authorization = `Bearer ${await fetchToken(server.url, CLIENT)}`;
    fs.writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
    const atStart = statusMb(server.pid, 'VmRSS');
    const block = patterned(MB);
    const body = function* (): Iterable<Uint8Array> {
      yield FORM_HEAD;
      for (let sent = 0; sent < BIG_SIZE; sent += MB) for (let offset = 0; offset < MB; offset += CHUNK) yield block.subarray(offset, offset + CHUNK);
      yield FORM_TAIL;
    };
    const result = await upload(`${server.url}/v1/resources`, authorization, `multipart/form-data; boundary=${BOUNDARY}`, multipartLength(BIG_SIZE), body);
    const { size_bytes } = JSON.parse(result.body) as { size_bytes: number };
    if (size_bytes !== BIG_SIZE) throw new Error(`the 500 MB upload stored ${size_bytes} bytes`);
    return { atStart, peak: statusMb(server.pid, 'VmHWM') };
  } finally {
    await server.stop();
  }
}

export function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

function startRunloom(workDir: string): Promise<ChildServer> {
  const dataDir = fs.mkdtempSync(path.join(workDir, 'data-'));
  return startChildServer([CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--rate-limit', '0', ...bootstrapFlag(CLIENT)], workDir);
}

export function patterned(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 31 + (index >> 12)) & 0xff;
  return bytes;
}
