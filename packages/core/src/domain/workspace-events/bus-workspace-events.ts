import { inject, injectable } from 'inversify';
import { DurableEventBus, type EventBus } from '../../ports/event-bus';
import type { PublishedWorkspaceEvent, WorkspaceEvent, WorkspaceEventSubscription, WorkspaceEvents } from './workspace-events';

/**
 * `WorkspaceEvents` on the `DurableEventBus`: one topic per workspace, the bus's numbering as ids,
 * so ids and the replay backlog survive a restart and are shared by instances on one database.
 */
@injectable()
export class BusWorkspaceEvents implements WorkspaceEvents {
  constructor(@inject(DurableEventBus) private readonly bus: EventBus) {}

  async publish(workspaceId: string, event: WorkspaceEvent): Promise<PublishedWorkspaceEvent> {
    const published = await this.bus.publish(topicOf(workspaceId), event);
    return { id: published.seq, workspaceId, event };
  }

  subscribe(workspaceId: string, handler: (event: PublishedWorkspaceEvent) => void, options?: { after?: number }): WorkspaceEventSubscription {
    return this.bus.subscribe<WorkspaceEvent>(topicOf(workspaceId), (published) => handler({ id: published.seq, workspaceId, event: published.data }), options);
  }
}

function topicOf(workspaceId: string): string {
  return `workspace:${workspaceId}`;
}
