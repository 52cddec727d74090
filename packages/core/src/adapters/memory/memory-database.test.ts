import { describeDatabaseContract } from '../database.contract';
import { MemoryDatabase } from './memory-database';

describeDatabaseContract('MemoryDatabase', async () => ({ database: new MemoryDatabase(), cleanup: async () => {} }));
