import type { Migration } from '../../ports/database';

export const WORKSPACES_COLLECTION = 'workspaces';
export const LIFECYCLE_EVENTS_COLLECTION = 'workspace_lifecycle_events';
export const TEMPLATES_COLLECTION = 'workspace_templates';

/** The workspace feature's collections; never edit a released step, add one. */
export const workspaceMigrations: Migration[] = [
  {
    id: 'workspaces/001-create',
    steps: [
      {
        createCollection: WORKSPACES_COLLECTION,
        fields: { account_id: 'text', status: 'text', created_at: 'text', updated_at: 'text', revision: 'integer' },
      },
    ],
  },
  {
    id: 'workspaces/002-lifecycle-and-templates',
    steps: [
      // Deleted workspaces are left out of the list by this field.
      { addField: { collection: WORKSPACES_COLLECTION, field: 'deleted_at', type: 'text' } },
      { createCollection: LIFECYCLE_EVENTS_COLLECTION, fields: { account_id: 'text', workspace_id: 'text', created_at: 'text' } },
      { createCollection: TEMPLATES_COLLECTION, fields: { account_id: 'text', created_at: 'text' } },
    ],
  },
];
