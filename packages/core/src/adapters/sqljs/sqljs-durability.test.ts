import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Doc, DuplicateIdError, type Migration } from '../../ports/database';
import type { Logger } from '../../ports/logger';
import { decodeRecord, decodeSegment, encodeFrame, encodeRecord, listSegments, segmentPath } from './log-format';
import type { LoggedStatement } from './sql-engine';
import { readSnapshot, snapshotImageBytes } from './snapshot-file';
import { openSqlJsDatabase, type SqlJsDatabase, type SqlJsDatabaseOptions } from './sqljs-database';

const NOTES = 'notes';
const notesMigration: Migration = { id: 'test/001-notes', steps: [{ createCollection: NOTES, fields: { n: 'integer' } }] };

/** A logger that keeps its warnings, to check that recovery says what it dropped. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, warn: (_fields, message) => warnings.push(message), error() {} };
}

function segments(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.oplog')).sort();
}

describe('SqlJsDatabase durability', function () {
  this.timeout(60_000);
  let dir: string;
  let open: SqlJsDatabase[];

  beforeEach(() => {
    dir = mkdtempSync(`${os.tmpdir()}/runloom-`);
    open = [];
  });
  afterEach(async () => {
    for (const database of open) await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function openStore(options: Partial<SqlJsDatabaseOptions> = {}): Promise<SqlJsDatabase> {
    const database = await openSqlJsDatabase({ dir, ...options });
    open.push(database);
    await database.migrate([notesMigration]);
    return database;
  }

  async function closeStore(database: SqlJsDatabase): Promise<void> {
    open = open.filter((other) => other !== database);
    await database.close();
  }

  /** `count` notes, one write each, then closed: the log holds one frame per note. */
  async function writeNotes(count: number): Promise<void> {
    const database = await openStore();
    for (let n = 0; n < count; n += 1) await database.write([{ op: 'insert', collection: NOTES, doc: { id: `note-${n}`, n, text: 'ünïcode ✓' } }]);
    await closeStore(database);
  }

  async function noteNumbers(database: SqlJsDatabase): Promise<number[]> {
    return (await database.find(NOTES, { orderBy: [{ field: 'n' }] })).map((doc) => doc.n as number);
  }

  const range = (count: number): number[] => Array.from({ length: count }, (_, n) => n);

  it('finds every acknowledged write after the writing process is killed with SIGKILL mid-stream', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../../test-support/crash-test-child.ts'), dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acknowledged: string[] = [];
    let partial = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // 'close' comes after the child's output is fully read, so no acknowledged id is left unread.
    const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n');
        partial = lines.pop()!;
        acknowledged.push(...lines);
        // Kill once snapshots have replaced some of the log, in the middle of the stream.
        if (acknowledged.length >= 1000 && existsSync(path.join(dir, 'snapshot.db'))) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => reject(new Error(`child exited before it was killed: ${stderr}`)));
    });
    assert.equal(await closed, 'SIGKILL');
    acknowledged.push(...partial.split('\n').filter((line) => line.length > 0));

    const database = await openSqlJsDatabase({ dir });
    open.push(database);
    const stored = new Set((await database.find('pairs')).map((doc) => doc.id));
    const missing = acknowledged.filter((id) => !stored.has(`${id}-a`) || !stored.has(`${id}-b`));
    assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged writes are missing`);
    for (const id of stored) {
      const pair = id.replace(/-[ab]$/, '');
      assert.ok(stored.has(`${pair}-a`) && stored.has(`${pair}-b`), `half of the batch ${pair} survived`);
    }
    await database.write([{ op: 'insert', collection: 'pairs', doc: { id: 'after-crash', writer: -1 } }]);
    assert.ok(await database.get('pairs', 'after-crash'));
  });

  it('keeps every earlier record when garbage follows the last frame', async () => {
    await writeNotes(20);
    const logger = recordingLogger();
    appendFileSync(path.join(dir, segments(dir).at(-1)!), Buffer.from('\x07\x00\x00\x00garbage after the last frame'));
    const database = await openStore({ logger });
    assert.deepEqual(await noteNumbers(database), range(20));
    assert.equal(logger.warnings.length, 1);
    await database.write([{ op: 'insert', collection: NOTES, doc: { id: 'note-20', n: 20 } }]);
    await closeStore(database);
    assert.deepEqual(await noteNumbers(await openStore()), range(21));
  });

  it('drops only a torn last frame, and writes after it survive the next reopen', async () => {
    await writeNotes(20);
    const last = path.join(dir, segments(dir).at(-1)!);
    truncateSync(last, readFileSync(last).length - 5);
    const logger = recordingLogger();
    const database = await openStore({ logger });
    assert.deepEqual(await noteNumbers(database), range(19));
    assert.match(logger.warnings.join(), /torn or damaged tail/);
    await database.write([{ op: 'insert', collection: NOTES, doc: { id: 'note-19', n: 19 } }]);
    await database.write([{ op: 'insert', collection: NOTES, doc: { id: 'note-20', n: 20 } }]);
    await closeStore(database);
    assert.deepEqual(await noteNumbers(await openStore()), range(21));
  });

  it('detects a flipped byte in the last record by its checksum and keeps the records before it', async () => {
    await writeNotes(20);
    const last = path.join(dir, segments(dir).at(-1)!);
    const data = readFileSync(last);
    data[data.length - 3] = data[data.length - 3]! ^ 0x20;
    writeFileSync(last, data);
    const database = await openStore();
    assert.deepEqual(await noteNumbers(database), range(19));
    await database.write([{ op: 'insert', collection: NOTES, doc: { id: 'note-19', n: 19, again: true } }]);
    await closeStore(database);
    const reopened = await openStore();
    assert.deepEqual(await noteNumbers(reopened), range(20));
    assert.equal((await reopened.get(NOTES, 'note-19'))?.again, true);
  });

  it('refuses to open when damage sits before records of a later segment, rather than dropping them', async () => {
    await writeNotes(20);
    // A later segment continuing the sequence (records 1 to 21 are the migration and the notes).
    const statement: LoggedStatement = ['INSERT INTO "notes" ("id", "_doc", "n") VALUES (?, ?, ?)', ['note-20', '{"id":"note-20","n":20}', 20]];
    writeFileSync(segmentPath(dir, 22), encodeFrame(22, encodeRecord([statement])));
    const first = path.join(dir, segments(dir)[0]!);
    const data = readFileSync(first);
    data[30] = data[30]! ^ 0xff;
    writeFileSync(first, data);
    await assert.rejects(openSqlJsDatabase({ dir }), /damaged .* later segments hold records/);
    rmSync(first);
    await assert.rejects(openSqlJsDatabase({ dir }), /missing records 1 to 21/);
  });

  it('snapshots when segments fill, deletes the covered segments, and reopens with everything', async () => {
    const database = await openStore({ segmentBytes: 16 * 1024 });
    for (let wave = 0; wave < 20; wave += 1) {
      await Promise.all(
        range(50).map((index) => {
          const n = wave * 50 + index;
          return database.write([{ op: 'insert', collection: NOTES, doc: { id: `note-${n}`, n, body: 'x'.repeat(100) } }]);
        }),
      );
    }
    await database.snapshot();
    assert.ok(existsSync(path.join(dir, 'snapshot.db')));
    const remaining = segments(dir);
    assert.equal(remaining.length, 1, `segments left after the snapshot: ${remaining.join(', ')}`);
    assert.notEqual(remaining[0], 'log-00000000000000000001.oplog');
    await database.write([{ op: 'replace', collection: NOTES, doc: { id: 'note-0', n: 0, changed: true } }]);
    await closeStore(database);
    const reopened = await openStore();
    assert.deepEqual(await noteNumbers(reopened), range(1000));
    assert.equal((await reopened.get(NOTES, 'note-0'))?.changed, true);
  });

  it('takes the next snapshot once the log closed since the last one holds as many bytes as it', async () => {
    const segmentBytes = 16 * 1024;
    // No snapshot at close: what is on disk afterwards is what the store took while writing.
    const options = { segmentBytes, closeSnapshotMaxBytes: 0 };
    const snapshotSeq = (): number => readSnapshot(dir)!.seq;
    let database = await openStore(options);
    let n = 0;
    const writeLog = async (bytes: number): Promise<void> => {
      for (let written = 0; written < bytes; written += 1000, n += 1) {
        await database.write([{ op: 'insert', collection: NOTES, doc: { id: `note-${n}`, n, body: 'x'.repeat(900) } }]);
      }
    };
    await writeLog(20 * segmentBytes);
    await database.snapshot();
    const first = snapshotSeq();
    const imageBytes = snapshotImageBytes(dir);
    assert.ok(imageBytes > 8 * segmentBytes, `a ${imageBytes}-byte image is several segments`);
    await writeLog(imageBytes / 2);
    await closeStore(database);
    assert.equal(snapshotSeq(), first, 'half a snapshot of log closed: no snapshot yet');
    assert.ok(segments(dir).length > 3);
    database = await openStore(options);
    assert.deepEqual(await noteNumbers(database), range(n));
    await writeLog(imageBytes);
    await closeStore(database);
    assert.ok(snapshotSeq() > first, 'a snapshot of log closed: the next snapshot');
    assert.deepEqual(await noteNumbers(await openStore()), range(n));
  });

  it('recovers from a crash between writing a snapshot and deleting the segments it covers', async () => {
    await writeNotes(30);
    const saved = path.join(dir, 'saved');
    mkdirSync(saved);
    for (const file of segments(dir)) copyFileSync(path.join(dir, file), path.join(saved, file));
    const database = await openStore();
    await database.snapshot();
    assert.deepEqual(segments(dir), ['log-00000000000000000032.oplog'], 'the snapshot covers records 1 to 31');
    await closeStore(database);
    // As if the process died right after the rename: the covered segments are still there.
    for (const file of readdirSync(saved)) copyFileSync(path.join(saved, file), path.join(dir, file));
    const reopened = await openStore();
    assert.deepEqual(await noteNumbers(reopened), range(30));
    assert.ok(!segments(dir).includes('log-00000000000000000001.oplog'));
    await reopened.write([{ op: 'insert', collection: NOTES, doc: { id: 'note-30', n: 30 } }]);
    await closeStore(reopened);
    assert.deepEqual(await noteNumbers(await openStore()), range(31));
  });

  it('ignores a snapshot temp file left by a crash mid-snapshot', async () => {
    await writeNotes(5);
    writeFileSync(path.join(dir, 'snapshot.db.tmp'), 'half a snapshot');
    const database = await openStore();
    assert.deepEqual(await noteNumbers(database), range(5));
    assert.ok(!existsSync(path.join(dir, 'snapshot.db.tmp')));
  });

  it('refuses a second open of the same store while the first is open', async () => {
    await openStore();
    await assert.rejects(openSqlJsDatabase({ dir }), /already open/);
  });

  it('rebuilds field indexes of an older store to end with id, once and durably, with the same answers', async () => {
    // A log as stores wrote it before field indexes ended with id.
    const notes = [3, 1, 2].map((n) => [`INSERT INTO "notes" ("id", "_doc", "n") VALUES (?, ?, ?)`, [`note-${n}`, JSON.stringify({ id: `note-${n}`, n }), n % 2]]);
    const statements = [
      ['CREATE TABLE "notes" ("id" TEXT PRIMARY KEY NOT NULL, "_doc" TEXT NOT NULL, "n" INTEGER)', []],
      ['CREATE INDEX "notes__n" ON "notes" ("n")', []],
      ['INSERT INTO "_migrations" ("id", "applied_at") VALUES (?, ?)', [notesMigration.id, '2026-01-01T00:00:00.000Z']],
      ...notes,
    ];
    writeFileSync(segmentPath(dir, 1), encodeFrame(1, [Buffer.from(JSON.stringify(statements))]));
    const loggedStatements = (): string[] =>
      listSegments(dir).flatMap((segment) =>
        decodeSegment(readFileSync(segment.path), segment.startSeq).records.flatMap((record) => decodeRecord(record.payload).map(([sql]) => sql)),
      );

    const database = await openStore();
    assert.deepEqual((await database.find(NOTES, { where: { n: 1 } })).map((doc) => doc.id), ['note-1', 'note-3']);
    await closeStore(database);
    const upgrade = ['DROP INDEX "notes__n"', 'CREATE INDEX "notes__n" ON "notes" ("n", "id")'];
    assert.deepEqual(loggedStatements().filter((sql) => sql.includes('INDEX')), ['CREATE INDEX "notes__n" ON "notes" ("n")', ...upgrade]);

    const reopened = await openStore();
    assert.deepEqual((await reopened.find(NOTES, { where: { n: 1 }, limit: 1, offset: 1 })).map((doc) => doc.id), ['note-3']);
    assert.equal(loggedStatements().filter((sql) => sql.includes('INDEX')).length, 3, 'a reopened store rebuilds nothing more');
    await reopened.snapshot();
    await closeStore(reopened);
    const fromSnapshot = await openStore();
    assert.deepEqual((await fromSnapshot.find(NOTES, { orderBy: [{ field: 'n', direction: 'desc' }] })).map((doc) => doc.id), ['note-1', 'note-3', 'note-2']);
    assert.deepEqual(loggedStatements().filter((sql) => sql.includes('INDEX')), [], 'the snapshot holds the rebuilt index');
  });

  it('opens a log written in the JSON record format of earlier stores, goes on in the current one, and snapshots both', async () => {
    // Records as stores wrote them before documents were logged as bytes: one JSON array each,
    // every document a string inside it.
    const hard = { id: 'note-1', n: 1, text: 'quote " backslash \\ newline \n tab \t NUL \u0000 ünïcode ✓ 🙂 \u2028' };
    const insert = 'INSERT INTO "notes" ("id", "_doc", "n") VALUES (?, CAST(? AS TEXT), ?) ON CONFLICT ("id") DO NOTHING';
    const earlier: LoggedStatement[][] = [
      [
        ['CREATE TABLE "notes" ("id" TEXT PRIMARY KEY NOT NULL, "_doc" TEXT NOT NULL, "n" INTEGER)', []],
        ['CREATE INDEX "notes__n" ON "notes" ("n", "id")', []],
        ['INSERT INTO "_migrations" ("id", "applied_at") VALUES (?, ?)', [notesMigration.id, '2026-01-01T00:00:00.000Z']],
      ],
      [[insert, ['note-0', JSON.stringify({ id: 'note-0', n: 0 }), 0]]],
      [[insert, [hard.id, JSON.stringify(hard), 1]]],
      [['UPDATE "notes" SET "_doc" = CAST(? AS TEXT), "n" = ? WHERE "id" = ?', [JSON.stringify({ id: 'note-0', n: 0, edited: true }), 0, 'note-0']]],
    ];
    writeFileSync(segmentPath(dir, 1), Buffer.concat(earlier.map((statements, index) => encodeFrame(index + 1, [Buffer.from(JSON.stringify(statements))]))));

    const database = await openStore();
    assert.deepEqual(await database.get(NOTES, 'note-1'), hard);
    assert.deepEqual(await database.get(NOTES, 'note-0'), { id: 'note-0', n: 0, edited: true });
    const later = { id: 'note-2', n: 2, text: hard.text };
    await database.write([{ op: 'insert', collection: NOTES, doc: later }]);
    await database.write([{ op: 'replace', collection: NOTES, doc: { ...hard, again: true } }]);
    const expected = [{ id: 'note-0', n: 0, edited: true }, { ...hard, again: true }, later];
    assert.deepEqual(await database.find(NOTES), expected);
    await closeStore(database);
    assert.deepEqual(
      listSegments(dir).flatMap((segment) => decodeSegment(readFileSync(segment.path), segment.startSeq).records.map((record) => record.payload[0])),
      [...earlier.map(() => '['.charCodeAt(0)), 0x01, 0x01],
      'the old records stay as they were; new ones are in the current format',
    );

    // Replayed from the log alone, then from the snapshot the worker made by replaying it.
    const replayed = await openStore();
    assert.deepEqual(await replayed.find(NOTES), expected);
    assert.deepEqual(await replayed.find(NOTES, { where: { n: 1 } }), [{ ...hard, again: true }]);
    await replayed.snapshot();
    await closeStore(replayed);
    assert.equal(readSnapshot(dir)?.seq, earlier.length + 2);
    assert.deepEqual(await (await openStore()).find(NOTES), expected);
  });

  it('keeps an invariant across concurrent conflicting transfers, for every reader and after reopen', async () => {
    const database = await openStore();
    const accounts: Doc[] = range(4).map((index) => ({ id: `acct-${index}`, n: 100 }));
    await database.write(accounts.map((doc) => ({ op: 'insert', collection: NOTES, doc })));
    const totals: number[] = [];
    const transfer = async (from: string, to: string): Promise<void> => {
      for (;;) {
        const [source, target] = [await database.get(NOTES, from), await database.get(NOTES, to)];
        try {
          await database.write([
            { op: 'replace', collection: NOTES, doc: { id: from, n: (source!.n as number) - 1 }, expect: { n: source!.n as number } },
            { op: 'replace', collection: NOTES, doc: { id: to, n: (target!.n as number) + 1 }, expect: { n: target!.n as number } },
          ]);
          return;
        } catch (error) {
          if (!(error instanceof Error && error.name === 'WriteConflictError')) throw error;
        }
      }
    };
    const readTotal = async (): Promise<void> => {
      const docs = await database.find(NOTES);
      totals.push(docs.reduce((sum, doc) => sum + (doc.n as number), 0));
    };
    await Promise.all(
      range(60).flatMap((index) => [transfer(`acct-${index % 4}`, `acct-${(index + 1) % 4}`), readTotal()]),
    );
    assert.deepEqual(new Set(totals), new Set([400]));
    await assert.rejects(database.write([{ op: 'insert', collection: NOTES, doc: accounts[0]! }]), DuplicateIdError);
    await closeStore(database);
    const reopened = await openStore();
    const balances = (await reopened.find(NOTES)).map((doc) => doc.n as number);
    assert.equal(balances.reduce((sum, n) => sum + n, 0), 400);
    assert.deepEqual(balances, [100, 100, 100, 100], 'each account gave as much as it received');
  });
});
