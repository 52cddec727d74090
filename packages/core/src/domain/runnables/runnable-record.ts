import type { AccountRecord } from '../storage/repository';
import type { RunnableConfig, RunnableType } from './config-schema';

/** A runnable as the API answers it: exactly the fields of docs/api.md#runnables, in that order. */
export interface Runnable {
  id: string;
  account_id: string;
  name: string;
  config_content: string;
  config_content_parsed: RunnableConfig;
  config_content_type: RunnableType;
  config_content_sha256: string;
  created_at: string;
  updated_at: string;
  description?: string;
  created_by: string;
  tags: string[];
}

/** One configuration of a runnable's history; version 1 is the one it was created with. */
export interface RunnableVersion {
  version: number;
  config_content: string;
  config_content_sha256: string;
  created_at: string;
  created_by: string;
}

/**
 * The stored runnable: the answer plus its current configuration `version` and a `revision` that
 * every write increments (the precondition that keeps concurrent updates from losing one another).
 */
export interface RunnableDoc extends Runnable, AccountRecord {
  version: number;
  revision: number;
}

export interface RunnableVersionDoc extends RunnableVersion, AccountRecord {
  runnable_id: string;
}

export function toRunnable(doc: RunnableDoc): Runnable {
  const { version: _version, revision: _revision, ...runnable } = doc;
  return runnable;
}

export function toRunnableVersion(doc: RunnableVersionDoc): RunnableVersion {
  return {
    version: doc.version,
    config_content: doc.config_content,
    config_content_sha256: doc.config_content_sha256,
    created_at: doc.created_at,
    created_by: doc.created_by,
  };
}
