import { inject, injectable } from 'inversify';
import { validationError } from '../errors';
import { Clock } from '../../ports/clock';
import { Database } from '../../ports/database';
import { IdGenerator } from '../../ports/id-generator';
import type { WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { RepositoryCloner } from '../repositories/repository-cloner';
import { type AccountRecord, Repository } from '../storage/repository';
import { TEMPLATES_COLLECTION } from './workspace-migrations';
import {
  createTemplateBody,
  type CreateTemplateInput,
  templateFileBytes,
  type WorkspaceTemplate,
  type WorkspaceTemplateSummary,
} from './workspace-template-schemas';

type WorkspaceTemplateRecord = WorkspaceTemplate & AccountRecord;

/**
 * Templates a new workspace starts from (docs/api.md#workspace-templates), owned by an account:
 * files kept in the store, or a git repository cloned when a workspace is made from it.
 */
@injectable()
export class WorkspaceTemplateService {
  private readonly templates: Repository<WorkspaceTemplateRecord>;

  constructor(
    @inject(Database) database: Database,
    @inject(IdGenerator) private readonly ids: IdGenerator,
    @inject(Clock) private readonly clock: Clock,
    @inject(RepositoryCloner) private readonly cloner: RepositoryCloner,
  ) {
    this.templates = new Repository(database, TEMPLATES_COLLECTION);
  }

  /** Stores a template; 400 naming the field for bad paths, both or neither of files and source, too much content. */
  async create(accountId: string, input: CreateTemplateInput): Promise<WorkspaceTemplate> {
    // Library callers reach here without the router: the paths are checked here for them too.
    const parsed = createTemplateBody.safeParse(input);
    if (!parsed.success) throw validationError(parsed.error);
    const { name, description, files, source } = parsed.data;
    const now = this.clock.now().toISOString();
    const record: WorkspaceTemplateRecord = {
      id: this.ids.newId(),
      account_id: accountId,
      name,
      description: description ?? null,
      ...(files ? { files } : { source: { url: source!.url, ref: source!.ref ?? null } }),
      created_at: now,
      updated_at: now,
    };
    await this.templates.insert(record);
    return record;
  }

  /** The account's templates, newest first, each file by path and size only. */
  async list(accountId: string, page: { limit: number; offset: number }): Promise<WorkspaceTemplateSummary[]> {
    const records = await this.templates.find(accountId, { orderBy: [{ field: 'created_at', direction: 'desc' }], limit: page.limit, offset: page.offset });
    return records.map(({ files, ...template }) => ({
      ...template,
      ...(files ? { files: files.map((file) => ({ path: file.path, size: templateFileBytes(file).length })) } : {}),
    }));
  }

  /** The template with its files' content, or 404 (another account's is missing too). */
  get(accountId: string, templateId: string): Promise<WorkspaceTemplate> {
    return this.templates.require(accountId, templateId, `workspace template ${templateId}`);
  }

  /**
   * Writes the template's files into a new workspace's `files`, each atomically, or clones its git
   * source there (`.git` included, so the workspace can be connected to the repository later). On
   * failure part of it may be written: the caller discards the workspace's files (see
   * `WorkspaceService.create`). A remote that refuses or does not answer is a 422, a refused URL a
   * 400 (docs/api.md#repositories).
   */
  async copyInto(template: WorkspaceTemplate, files: WorkspaceFileSystem): Promise<void> {
    if (template.source) {
      await this.cloner.cloneInto(files, { url: template.source.url, ref: template.source.ref ?? undefined });
      return;
    }
    for (const file of template.files ?? []) await files.writeFile(file.path, templateFileBytes(file));
  }
}
