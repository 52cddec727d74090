import type { AccountRecord } from '../storage/repository';
import type { LifecycleEventName } from './workspace-lifecycle';

export type WorkspaceStatus = 'active' | 'archived';

/** A workspace as the API answers it (docs/api.md#workspaces). */
export interface Workspace {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  template_id: string | null;
  status: WorkspaceStatus;
  metadata: Record<string, unknown>;
  /** Set by the lifecycle event `deleted`, cleared by `restored` (docs/api.md#workspace-lifecycle). */
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The stored record: `revision` counts changes, so racing updates are detected and redone. */
export interface WorkspaceRecord extends Workspace, AccountRecord {
  revision: number;
}

export function toWorkspace(record: WorkspaceRecord): Workspace {
  return {
    id: record.id,
    account_id: record.account_id,
    name: record.name,
    description: record.description,
    template_id: record.template_id,
    status: record.status,
    metadata: record.metadata,
    deleted_at: record.deleted_at ?? null,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

/** One entry of a workspace's lifecycle log, as answered. */
export interface LifecycleEvent {
  id: string;
  event: LifecycleEventName;
  notes: string | null;
  /** The client that posted it (the workspace's creator for `created`). */
  created_by: string;
  created_at: string;
}

export interface LifecycleEventRecord extends LifecycleEvent, AccountRecord {
  workspace_id: string;
}

export function toLifecycleEvent(record: LifecycleEventRecord): LifecycleEvent {
  return { id: record.id, event: record.event, notes: record.notes, created_by: record.created_by, created_at: record.created_at };
}
