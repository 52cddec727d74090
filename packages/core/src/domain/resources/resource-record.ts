import type { Migration } from '../../ports/database';
import type { AccountRecord } from '../storage/repository';

export const RESOURCES_COLLECTION = 'resources';
/** One document per stored content (id = sha256): which blob holds it and how many resources share it. */
export const RESOURCE_BLOBS_COLLECTION = 'resource_blobs';

export const EXTERNAL_STORAGE_TYPES = ['s3', 'gcs', 'azure_blob'] as const;
export type ExternalStorageType = (typeof EXTERNAL_STORAGE_TYPES)[number];

/** A stored resource, exactly the fields of docs/api.md#resources; it is stored as it is answered. */
export interface Resource extends AccountRecord {
  id: string;
  account_id: string;
  name: string;
  directory_path: string;
  mime_type: string;
  sha256: string;
  original_uri: string | null;
  external_id: string | null;
  external_storage_type: ExternalStorageType | null;
  storage_bucket: string;
  storage_key: string;
  size_bytes: number;
  tags: string[];
  metadata: Record<string, unknown> | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The shared blob of one content. `refs` counts the resources (of any account) pointing at
 * `storage_key`; it changes only in the same atomic write as those resources, with `refs` and
 * `storage_key` as preconditions, which is what makes sharing and freeing race-free.
 */
export interface BlobReference {
  [field: string]: unknown;
  id: string;
  storage_key: string;
  storage_bucket: string;
  refs: number;
}

export const resourceMigrations: Migration[] = [
  {
    id: 'resources/001-create',
    steps: [
      {
        createCollection: RESOURCES_COLLECTION,
        fields: { account_id: 'text', directory_path: 'text', sha256: 'text', tags: 'json', created_at: 'text', updated_at: 'text' },
      },
      { createCollection: RESOURCE_BLOBS_COLLECTION, fields: { storage_key: 'text', refs: 'integer' } },
    ],
  },
];
