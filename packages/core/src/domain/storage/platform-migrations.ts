import type { Migration } from '../../ports/database';

/** Instance-wide facts (e.g. when the store was created); also what readiness probes. */
export const META_COLLECTION = 'runloom_meta';

export const platformMigrations: Migration[] = [
  { id: 'platform/001-meta', steps: [{ createCollection: META_COLLECTION, fields: {} }] },
];
