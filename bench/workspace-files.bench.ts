import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type BenchResult, benchResult } from './bench-result';
import { bootstrapFlag, type ChildServer, createWorkspace, fetchToken, startChildServer } from './child-server';
import { alternate, BARE_SERVER, fetchBytes, patterned, rawBody, statusMb, upload } from './resources.bench';

/**
 * Workspace file bytes through `runloom serve` (the built CLI in its own process) against the bare
 * node:http server of resources.bench.ts in another process, on loopback, the same client code for
 * both, the two servers taking turns (median of BENCH_ROUNDS):
 * (a) upload of 50 MB (`POST /workspace/{id}/files?path=`, raw bytes), bare: the body written to a
 *     file and fsynced — Runloom's write is atomic and durable (temp file, fsync, rename), so the
 *     baseline does the same disk work short of the rename;
 * (b) download of the 50 MB (`GET /workspace/{id}/file?path=`), bare: the same file streamed;
 * (c) peak RSS (VmHWM) of a fresh server while a client downloads the zip of a folder of
 *     BENCH_ZIP_MB (default 1024) MB: 16 sparse files made with truncate, so the folder costs no
 *     disk; the server still reads and deflates every byte of them.
 */

const ROOT = path.resolve(__dirname, '..');
const CLI = path.join(ROOT, 'packages/server-adapter/dist/cli.js');
const MB = 1024 * 1024;
const SIZE = 50 * MB;
const ZIP_MB = Number(process.env.BENCH_ZIP_MB ?? 1024);
const ZIP_FILES = 16;
const CLIENT = { account: 'acct-bench', id: 'bench-workspace-files', secret: 'bench-workspace-files-secret-0123' };

export async function runWorkspaceFilesBench(): Promise<BenchResult[]> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm run bench does)`);
  if (process.platform !== 'linux') throw new Error('the RSS figure reads /proc: run this bench on Linux');
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runloom-bench-workspace-files-'));
  const content = patterned(SIZE);
  const contentFile = path.join(workDir, 'content.bin');
  fs.writeFileSync(contentFile, content);
  const servers: ChildServer[] = [];
  try {
    const runloom = await startRunloom(workDir);
    servers.push(runloom.server);
    const bare = await startChildServer(['-e', BARE_SERVER], workDir, { BARE_SINK: path.join(workDir, 'bare-upload.bin'), BARE_FILE: contentFile });
    servers.push(bare);
    const authorization = `Bearer ${await fetchToken(runloom.server.url, CLIENT)}`;
    const workspace = await createWorkspace(runloom.server.url, authorization);
    const files = `${runloom.server.url}/workspace/${workspace}`;

    let uploads = 0;
    // A new path each time: every upload is a create (201), as against the bare server.
    const put = (url: string) => upload(url, authorization, 'application/octet-stream', SIZE, rawBody(content));
    const uploaded = await alternate(
      () => put(`${files}/files?path=bench/upload-${(uploads += 1)}.bin`),
      () => put(bare.url),
    );
    const downloaded = await alternate(
      () => fetchBytes(`${files}/file?path=bench/upload-1.bin`, authorization),
      () => fetchBytes(bare.url, authorization),
    );
    for (const server of servers.splice(0)) await server.stop();

    const zip = await peakRssDuringZip(workDir);
    const throughput = (ms: number): number => SIZE / MB / (ms / 1000);
    return [
      benchResult({
        name: '(a) 50 MB workspace file upload: runloom serve / bare node:http writing and fsyncing the file',
        value: throughput(uploaded.subject),
        baseline: throughput(uploaded.baseline),
        goal: { of: 'ratio', atLeast: 0.7 },
        unit: 'MB/s',
      }),
      benchResult({
        name: '(b) 50 MB workspace file download: runloom serve / bare node:http streaming the file',
        value: throughput(downloaded.subject),
        baseline: throughput(downloaded.baseline),
        goal: { of: 'ratio', atLeast: 0.7 },
        unit: 'MB/s',
      }),
      benchResult({
        name: `(c) peak RSS of runloom serve zipping a ${ZIP_MB} MB folder (${zip.zipMb.toFixed(0)} MB of zip streamed; baseline: its RSS just before)`,
        value: zip.peak,
        baseline: zip.atStart,
        goal: { of: 'value', atMost: 150 },
        unit: 'MB',
      }),
    ];
  } finally {
    for (const server of servers) await server.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

export { runWorkspaceFilesBench as run };

/**
 * A fresh server with ZIP_MB of sparse files in a workspace folder: its RSS just before the zip
 * download, and its peak RSS during it (VmHWM, reset through /proc/PID/clear_refs first), in MB.
 */
async function peakRssDuringZip(workDir: string): Promise<{ atStart: number; peak: number; zipMb: number }> {
  const { server, workspacesDir } = await startRunloom(workDir);
  try {
    const authorization = `Bearer ${await fetchToken(server.url, CLIENT)}`;
    const workspace = await createWorkspace(server.url, authorization);
    const folder = path.join(workspacesDir, workspace, 'big');
    fs.mkdirSync(folder, { recursive: true });
    for (let index = 0; index < ZIP_FILES; index += 1) fs.truncateSync(createEmpty(path.join(folder, `part-${index}.bin`)), (ZIP_MB * MB) / ZIP_FILES);
    fs.writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
    const atStart = statusMb(server.pid, 'VmRSS');
    const zipBytes = await drain(`${server.url}/workspace/${workspace}/directory/download?path=big`, authorization);
    return { atStart, peak: statusMb(server.pid, 'VmHWM'), zipMb: zipBytes / MB };
  } finally {
    await server.stop();
  }
}

function createEmpty(file: string): string {
  fs.closeSync(fs.openSync(file, 'w'));
  return file;
}

/** GETs `url`, counting and dropping the bytes; fails unless it answers 200. */
function drain(url: string, authorization: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { authorization } }, (response) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => (received += chunk.length));
        response.on('end', () => (response.statusCode === 200 ? resolve(received) : reject(new Error(`GET ${url} answered ${response.statusCode}`))));
      })
      .on('error', reject);
  });
}

async function startRunloom(workDir: string): Promise<{ server: ChildServer; workspacesDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(workDir, 'data-'));
  const workspacesDir = path.join(dataDir, 'workspaces');
  const server = await startChildServer(
    [CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--workspaces-dir', workspacesDir, '--rate-limit', '0', ...bootstrapFlag(CLIENT)],
    workDir,
  );
  return { server, workspacesDir };
}
