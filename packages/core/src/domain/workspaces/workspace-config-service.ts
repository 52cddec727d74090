import { inject, injectable } from 'inversify';
import { DomainError } from '../errors';
import { WorkspaceConflictError, type WorkspaceEntry, WorkspaceFileTooLargeError, type WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { WorkspaceEvents } from '../workspace-events/workspace-events';
import {
  checkMergedConfig,
  emptyConfigDocument,
  MAX_CONFIG_BYTES,
  mergeIntoDocument,
  patchableConfigDocument,
  readConfigDocument,
  WORKSPACE_CONFIG_PATH,
  type WorkspaceConfig,
} from './workspace-config';
import { WorkspaceLocks } from './workspace-locks';
import { WorkspaceService } from './workspace-service';

export type { WorkspaceConfig };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The configuration of a workspace, kept in its files at `.runloom/workspace-config.runloom.yaml`
 * (docs/api.md#workspace-config). Threads, commands and process runs read it with `get` (the
 * default model); `patch` merges a change into the file, keeping its comments and key order.
 */
@injectable()
export class WorkspaceConfigService {
  constructor(
    /** Patches of one workspace's file, one after the other across instances sharing the workspaces dir. */
    @inject(WorkspaceLocks) private readonly locks: WorkspaceLocks,
    @inject(WorkspaceService) private readonly workspaces: WorkspaceService,
    @inject(WorkspaceEvents) private readonly events: WorkspaceEvents,
  ) {}

  /**
   * The workspace's configuration (`{}` without the file), or 404 for a workspace that is not the
   * account's; 400 locating the problem (line, column) when the file is not a valid configuration.
   */
  async get(accountId: string, workspaceId: string): Promise<WorkspaceConfig> {
    const files = await this.workspaces.files(accountId, workspaceId);
    const text = await readConfigText(files);
    return text === undefined ? {} : readConfigDocument(text).config;
  }

  /**
   * Merges `patch` into the file (objects merge, anything else replaces, `null` deletes), checks
   * the result against the schema and writes it atomically; answers the new configuration. Changes
   * to one workspace are applied one after the other, so concurrent patches all land. 409 while the
   * workspace is archived.
   */
  patch(accountId: string, workspaceId: string, patch: Record<string, unknown>): Promise<WorkspaceConfig> {
    return this.locks.run(workspaceId, async () => {
      await this.workspaces.requireWritable(accountId, workspaceId);
      const files = await this.workspaces.files(accountId, workspaceId);
      const text = await readConfigText(files);
      const document = text === undefined ? emptyConfigDocument() : patchableConfigDocument(text);
      mergeIntoDocument(document, patch);
      const config = checkMergedConfig(document);
      // lineWidth 0: untouched long values are written back as they were, not folded.
      const written = await writeConfig(files, document.toString({ lineWidth: 0 }));
      await this.events.publish(workspaceId, { type: text === undefined ? 'file.created' : 'file.updated', path: WORKSPACE_CONFIG_PATH, size: written.size });
      await this.events.publish(workspaceId, { type: 'config.updated', path: WORKSPACE_CONFIG_PATH });
      return config;
    });
  }
}

/** The file's text; undefined when the workspace has none. */
async function readConfigText(files: WorkspaceFileSystem): Promise<string | undefined> {
  const entry = await files.stat(WORKSPACE_CONFIG_PATH);
  if (!entry) return undefined;
  if (entry.type !== 'file') throw DomainError.conflict(`${WORKSPACE_CONFIG_PATH} is a directory: delete or move it to use the workspace configuration`);
  if (entry.size > MAX_CONFIG_BYTES) {
    throw DomainError.invalid(`${WORKSPACE_CONFIG_PATH} is over the limit of ${MAX_CONFIG_BYTES} bytes (${entry.size}): shorten the file`);
  }
  const bytes = await files.readBytes(WORKSPACE_CONFIG_PATH);
  try {
    return utf8.decode(bytes);
  } catch {
    throw DomainError.invalid(`${WORKSPACE_CONFIG_PATH} is not UTF-8 text: fix the file`);
  }
}

async function writeConfig(files: WorkspaceFileSystem, text: string): Promise<WorkspaceEntry> {
  try {
    return await files.writeFile(WORKSPACE_CONFIG_PATH, text, { maxBytes: MAX_CONFIG_BYTES });
  } catch (error) {
    if (error instanceof WorkspaceFileTooLargeError) {
      throw DomainError.tooLarge(`the patched configuration is over the limit of ${MAX_CONFIG_BYTES} bytes: keep large data in files of their own`);
    }
    if (error instanceof WorkspaceConflictError) throw DomainError.conflict(`${WORKSPACE_CONFIG_PATH} cannot be written: ${error.reason}`);
    throw error;
  }
}
