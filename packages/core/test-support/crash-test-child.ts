import { openSqlJsDatabase } from '../src/adapters/sqljs/sqljs-database';

/**
 * Child process of the kill -9 test: writes pairs of documents forever from several concurrent
 * writers and prints each pair's id once its write is acknowledged. Usage: crash-test-child.ts DIR
 */
const WRITERS = 8;

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: crash-test-child.ts DIR');
  // Small segments, so snapshots and segment deletion happen all along the stream.
  const database = await openSqlJsDatabase({ dir, segmentBytes: 256 * 1024 });
  await database.migrate([{ id: 'crash/001-pairs', steps: [{ createCollection: 'pairs', fields: { writer: 'integer' } }] }]);
  const padding = 'p'.repeat(200);
  const writer = async (writer: number): Promise<never> => {
    for (let index = 0; ; index += 1) {
      const id = `${writer}-${index}`;
      await database.write([
        { op: 'insert', collection: 'pairs', doc: { id: `${id}-a`, writer, padding } },
        { op: 'insert', collection: 'pairs', doc: { id: `${id}-b`, writer, padding } },
      ]);
      process.stdout.write(`${id}\n`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, index) => writer(index)));
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
