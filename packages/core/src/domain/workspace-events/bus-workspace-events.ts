import { inject, injectable } from 'inversify';
import { EventBus } from '../../ports/event-bus';
import type { PublishedWorkspaceEvent, WorkspaceEvent, WorkspaceEventSubscription, WorkspaceEvents } from './workspace-events';

/** `WorkspaceEvents` on the `EventBus` port: one topic per workspace, the bus's numbering as ids. */
@injectable()
export class BusWorkspaceEvents implements WorkspaceEvents {
  constructor(@inject(EventBus) private readonly bus: EventBus) {}

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
