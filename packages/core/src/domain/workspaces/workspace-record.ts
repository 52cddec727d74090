import type { AccountRecord } from '../storage/repository';

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
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}
