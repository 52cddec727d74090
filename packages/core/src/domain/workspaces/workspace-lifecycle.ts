import type { WorkspaceRecord } from './workspace-record';

/**
 * The lifecycle events a client may record on a workspace (docs/api.md#workspace-lifecycle), and
 * what each does to the record. `created` is also recorded by the server when the workspace is made.
 */
export const LIFECYCLE_EVENTS = ['created', 'opened', 'closed', 'archived', 'unarchived', 'deleted', 'restored'] as const;
export type LifecycleEventName = (typeof LIFECYCLE_EVENTS)[number];

type RecordChange = Partial<Pick<WorkspaceRecord, 'status' | 'deleted_at'>>;

/**
 * What an event changes in `current`, at `now`: `archived`/`unarchived` set the status; `deleted` marks the
 * workspace deleted since `now` (hidden from the list, refusing changes, its files kept) and `restored` brings it
 * back. `created`, `opened` and `closed` are only recorded. Every event is accepted in every state,
 * so `unarchived` and `restored` always undo.
 */
export function lifecycleChange(event: LifecycleEventName, current: WorkspaceRecord, now: string): RecordChange {
  switch (event) {
    case 'archived':
      return { status: 'archived' };
    case 'unarchived':
      return { status: 'active' };
    case 'deleted':
      return { deleted_at: current.deleted_at ?? now };
    case 'restored':
      return { deleted_at: null };
    default:
      return {};
  }
}
