import { inject, injectable, multiInject, optional } from 'inversify';
import type * as z from 'zod';
import type { WorkspaceFileSystem } from '../../ports/workspace-file-system';
import type { workspaceMetadataSchema } from './workspace-schemas';
import { WorkspaceService } from './workspace-service';

/**
 * What a feature adds to a workspace's metadata summary (`GET /workspace/{id}/metadata`,
 * docs/api.md#workspaces). Multi-bound: threads, commands and process runs each bind one in their
 * module (`bind(WorkspaceMetadataContributor).toService(…)`), so the summary grows without this
 * feature knowing them. A contributor is called only for a workspace of the account.
 */
export const WorkspaceMetadataContributor = Symbol.for('runloom.WorkspaceMetadataContributor');

export interface WorkspaceMetadataContribution {
  thread_count?: number;
  command_count?: number;
  /** Process runs by status (`running: 2`); added up across contributors. */
  process_runs?: Record<string, number>;
  /** The feature's latest change in the workspace (ISO 8601), if any. */
  last_activity_at?: string | null;
}

export interface WorkspaceMetadataContributor {
  contribute(accountId: string, workspaceId: string): Promise<WorkspaceMetadataContribution>;
}

/** The summary `GET /workspace/{id}/metadata` answers (its fields are described in the schema). */
export type WorkspaceMetadata = z.infer<typeof workspaceMetadataSchema>;

/**
 * Entries (files and directories) a summary walks at most, down to MAX_COUNTED_DEPTH: a summary
 * for display costs a bounded walk, not one proportional to any workspace.
 */
export const MAX_COUNTED_ENTRIES = 100_000;
export const MAX_COUNTED_DEPTH = 64;

/** The metadata summary of a workspace: its files counted here, the rest from the contributors. */
@injectable()
export class WorkspaceMetadataService {
  constructor(
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @multiInject(WorkspaceMetadataContributor) @optional() private readonly contributors: WorkspaceMetadataContributor[],
  ) {}

  /** 404 for a workspace that is not the account's. */
  async summary(accountId: string, workspaceId: string): Promise<WorkspaceMetadata> {
    const workspace = await this.workspaces.require(accountId, workspaceId);
    const files = await this.workspaces.files(accountId, workspaceId);
    const [walked, lastLifecycle, contributions] = await Promise.all([
      countFiles(files),
      this.workspaces.lastLifecycleEvent(accountId, workspaceId),
      Promise.all(this.contributors.map((contributor) => contributor.contribute(accountId, workspaceId))),
    ]);
    const summary: WorkspaceMetadata = {
      file_count: walked.fileCount,
      total_bytes: walked.totalBytes,
      files_truncated: walked.truncated,
      thread_count: 0,
      command_count: 0,
      process_runs: {},
      last_activity_at: latest([workspace.updated_at, lastLifecycle?.created_at, walked.lastModified]),
    };
    for (const contribution of contributions) {
      summary.thread_count += contribution.thread_count ?? 0;
      summary.command_count += contribution.command_count ?? 0;
      for (const [status, count] of Object.entries(contribution.process_runs ?? {})) {
        summary.process_runs[status] = (summary.process_runs[status] ?? 0) + count;
      }
      summary.last_activity_at = latest([summary.last_activity_at, contribution.last_activity_at]);
    }
    return summary;
  }
}

async function countFiles(files: WorkspaceFileSystem): Promise<{ fileCount: number; totalBytes: number; truncated: boolean; lastModified: string | undefined }> {
  let fileCount = 0;
  let totalBytes = 0;
  let entries = 0;
  let lastModified = 0;
  for await (const entry of files.walk('', { maxDepth: MAX_COUNTED_DEPTH })) {
    if (entries === MAX_COUNTED_ENTRIES) return { fileCount, totalBytes, truncated: true, lastModified: isoOrUndefined(lastModified) };
    entries += 1;
    lastModified = Math.max(lastModified, entry.mtime.getTime());
    if (entry.type !== 'file') continue;
    fileCount += 1;
    totalBytes += entry.size;
  }
  return { fileCount, totalBytes, truncated: false, lastModified: isoOrUndefined(lastModified) };
}

function isoOrUndefined(ms: number): string | undefined {
  return ms > 0 ? new Date(ms).toISOString() : undefined;
}

/** The latest of ISO 8601 UTC timestamps (they sort as text); the first is always given. */
function latest([first, ...others]: [string, ...(string | null | undefined)[]]): string {
  return others.reduce<string>((best, candidate) => (candidate && candidate > best ? candidate : best), first);
}
