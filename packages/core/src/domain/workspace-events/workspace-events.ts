/**
 * The event stream of a workspace (docs/api.md#workspace-events): every change made through the
 * API (files, directories, threads, command executions, process runs, lifecycle) is published here
 * once it is durable, numbered per workspace, and read by `GET /workspace/{id}/events` (SSE, with
 * `Last-Event-ID` replay) and by the VS Code extension.
 */
export const WorkspaceEvents = Symbol.for('runloom.WorkspaceEvents');

/** `type` names what happened (`file.created`, `thread.updated`, …); the other fields say to what. */
export interface WorkspaceEvent {
  type: string;
  [field: string]: unknown;
}

/** An event as subscribers receive it: `id` increases per workspace. */
export interface PublishedWorkspaceEvent {
  id: number;
  workspaceId: string;
  event: WorkspaceEvent;
}

export interface WorkspaceEventSubscription {
  unsubscribe(): void;
}

export interface WorkspaceEvents {
  /** Publishes `event` on the workspace's stream; call it after the change is durable. */
  publish(workspaceId: string, event: WorkspaceEvent): Promise<PublishedWorkspaceEvent>;
  /**
   * Delivers the retained events numbered above `after` (when given), then live ones, each once
   * and in order.
   */
  subscribe(
    workspaceId: string,
    handler: (event: PublishedWorkspaceEvent) => void,
    options?: { after?: number },
  ): WorkspaceEventSubscription;
}
