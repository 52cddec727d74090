import fs from 'node:fs/promises';
import path from 'node:path';
import {
  Clock,
  ContainerModule,
  createRunloom,
  Database,
  DomainError,
  HttpClient,
  IdGenerator,
  isProviderName,
  PROVIDER_NAMES,
  ProviderService,
  RunloomConfig,
  SecretBox,
  WorkspaceFileSystems,
  type ProviderCallSettings,
  type ProviderCredentials,
  type ProviderName,
  type Runloom,
} from '@runloom/core';
import { NodeWorkspaceFileSystems, UuidV7Generator } from '@runloom/core/node';
import type { FolderWorkspace } from '../common/protocol';
import { CoreWrites } from './core-writes';

/** The one account of the editor: everything in the embedded store belongs to the person at it. */
export const EDITOR_ACCOUNT = 'local';

/** Provider credentials the editor keeps in its SecretStorage, held here in memory only. */
export type HeldCredentials = Map<ProviderName, Record<string, string>>;

export interface EmbeddedRunloom {
  runloom: Runloom;
  workspaces: FolderWorkspace[];
  credentials: HeldCredentials;
  /** What the core wrote in the open folders, so the folder watcher does not report it again. */
  coreWrites: CoreWrites;
  /** Shell commands may run while this is on (the editor's setting, in a trusted workspace). */
  shell: { enabled: boolean };
}

/**
 * Model calls take their credentials from what the editor handed over (`SetProviderCredentials`),
 * never from the store: API keys stay in VS Code's SecretStorage and this process's memory.
 */
class HeldCredentialsProviderService extends ProviderService {
  constructor(
    database: Database,
    secretBox: SecretBox,
    clock: Clock,
    http: HttpClient,
    ids: IdGenerator,
    private readonly held: HeldCredentials,
  ) {
    super(database, secretBox, clock, http, ids);
  }

  override async getCallSettings<P extends ProviderName>(_accountId: string, provider: P): Promise<ProviderCallSettings<P>> {
    const credentials = this.held.get(provider);
    if (!credentials) {
      throw DomainError.invalid(`no API key for ${provider}: run the command "Runloom: Set Provider API Key" and choose ${provider}`);
    }
    // The editor checked the keys when it stored them; the vendor adapter checks what it needs.
    return { credentials: credentials as unknown as ProviderCredentials[P], limits: { max_concurrency: null, requests_per_minute: null } };
  }

  override async enabledProviders(): Promise<ProviderName[]> {
    return PROVIDER_NAMES.filter((provider) => this.held.has(provider));
  }
}

/**
 * Starts the core inside the language server: the store in the extension's global storage, and one
 * workspace per open folder whose files are that folder on disk (ARCHITECTURE.md, "VS Code").
 * Which workspace id a folder has is kept in `folders.json` beside the store, so threads and runs
 * find their workspace again in the next session.
 */
export async function startEmbeddedRunloom(storagePath: string, folders: readonly { path: string; name: string }[], shellCommands: boolean): Promise<EmbeddedRunloom> {
  await fs.mkdir(storagePath, { recursive: true });
  const registryFile = path.join(storagePath, 'folders.json');
  const known = await readRegistry(registryFile);
  const ids = new UuidV7Generator();
  const workspaces: FolderWorkspace[] = folders.map((folder) => ({ folder: folder.path, name: folder.name, workspaceId: known[folder.path] ?? ids.newId() }));
  const rootById = new Map(workspaces.map((workspace) => [workspace.workspaceId, workspace.folder]));
  const folderFiles = new NodeWorkspaceFileSystems((workspaceId) => {
    const root = rootById.get(workspaceId);
    if (!root) throw new Error(`workspace ${workspaceId} is not an open folder`);
    return root;
  });
  const credentials: HeldCredentials = new Map();
  const coreWrites = new CoreWrites();
  const shell = { enabled: shellCommands };
  const editorModule = new ContainerModule(({ rebind, onActivation }) => {
    // The folders are the user's: the core reads and writes in them but never deletes one.
    rebind(WorkspaceFileSystems).toConstantValue({
      open: async (workspaceId: string) => coreWrites.recording(workspaceId, await folderFiles.open(workspaceId)),
      remove: async () => undefined,
    });
    // Workspace Trust can be granted (and the setting changed) while the core runs: the services
    // read `shellCommands` at each execution, so it follows the editor's state.
    onActivation(RunloomConfig, (_context, config: RunloomConfig) =>
      Object.defineProperty({ ...config }, 'shellCommands', { get: () => shell.enabled, enumerable: true }),
    );
    rebind(ProviderService)
      .toResolvedValue(
        (database: Database, secretBox: SecretBox, clock: Clock, http: HttpClient, ids: IdGenerator) =>
          new HeldCredentialsProviderService(database, secretBox, clock, http, ids, credentials),
        [Database, SecretBox, Clock, HttpClient, IdGenerator],
      )
      .inSingletonScope();
  });
  const runloom = await createRunloom({
    dataDir: path.join(storagePath, 'data'),
    // One person on their own machine: local model servers (Ollama, LM Studio, a fake in tests) are
    // as legitimate a destination as a vendor's cloud.
    allowPrivateNetwork: true,
    modules: [editorModule],
  });
  try {
    for (const workspace of workspaces) {
      const exists = await runloom.workspaces.require(EDITOR_ACCOUNT, workspace.workspaceId).then(
        () => true,
        () => false,
      );
      if (!exists) await runloom.workspaces.create(EDITOR_ACCOUNT, { id: workspace.workspaceId, name: workspace.name, metadata: { folder: workspace.folder } }, 'vscode');
    }
    await fs.writeFile(registryFile, JSON.stringify({ ...known, ...Object.fromEntries(workspaces.map((workspace) => [workspace.folder, workspace.workspaceId])) }, null, 2));
  } catch (error) {
    await runloom.close();
    throw error;
  }
  return { runloom, workspaces, credentials, coreWrites, shell };
}

/** Keeps the credentials the editor sends for `provider` (null forgets them). */
export function holdCredentials(held: HeldCredentials, provider: string, credentials: Record<string, string> | null): void {
  if (!isProviderName(provider)) throw new Error(`unknown provider ${provider}; one of ${PROVIDER_NAMES.join(', ')}`);
  if (credentials === null) held.delete(provider);
  else held.set(provider, credentials);
}

async function readRegistry(file: string): Promise<Record<string, string>> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string>) : {};
  } catch {
    // First start, or a file someone broke: folders get new workspaces.
    return {};
  }
}
