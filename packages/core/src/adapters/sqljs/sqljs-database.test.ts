import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import type { Database } from '../../ports/database';
import { describeDatabaseContract } from '../database.contract';
import { openSqlJsDatabase } from './sqljs-database';

describeDatabaseContract('SqlJsDatabase', async () => {
  const dir = mkdtempSync(`${os.tmpdir()}/runloom-`);
  let open: Database = await openSqlJsDatabase({ dir });
  return {
    database: open,
    reopen: async () => (open = await openSqlJsDatabase({ dir })),
    cleanup: async () => {
      await open.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
