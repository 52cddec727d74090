import { inject, injectable } from 'inversify';
import { GitClient, type GitHead } from '../../ports/git-client';
import type { WorkspaceFileSystem } from '../../ports/workspace-file-system';
import { providerOf } from './repository-hosts';
import { repositoryFailure } from './repository-errors';
import { parseRemote, tokenCredentials } from './repository-remote';

/** A repository to copy files from: its URL, the branch or tag, and a token when it is private. */
export interface RepositorySource {
  url: string;
  /** Branch or tag; default the remote's default branch. */
  ref?: string;
  token?: string;
  /** The HTTP Basic username sent with the token; default the one its host expects. */
  username?: string;
}

/**
 * Clones a repository into a workspace's files without connecting the workspace to it: what a
 * workspace made from a template with a git `source` starts from. It depends on nothing of the
 * workspaces feature, so `WorkspaceTemplateService` can use it without a cycle.
 */
@injectable()
export class RepositoryCloner {
  constructor(@inject(GitClient) private readonly git: GitClient) {}

  /**
   * Clones `source` into `files` (`.git` included, so the workspace can be connected to it later)
   * and answers the checked-out branch and commit. Refusals are `DomainError`s: a bad or refused
   * URL 400, a remote that refuses or does not answer 422, a workspace that already is a
   * repository or has files in the way 409 (docs/api.md#repositories).
   */
  async cloneInto(files: WorkspaceFileSystem, source: RepositorySource): Promise<GitHead> {
    const remote = parseRemote(source.url, 'source.url');
    const credentials = tokenCredentials(providerOf(remote.url), source.token ?? remote.token, source.username ?? remote.username);
    try {
      return await this.git.clone(files, { url: remote.url.href, ref: source.ref, credentials });
    } catch (error) {
      throw repositoryFailure(error);
    }
  }
}
