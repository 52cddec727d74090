import * as z from 'zod';
import { safePathSchema } from '../paths/safe-path';
import { REPOSITORY_PROVIDERS } from './repository-hosts';
import { MAX_REMOTE_URL_LENGTH } from './repository-remote';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/** The HTTP shapes of repository connections (docs/api.md#repositories). */

const MAX_TOKEN_LENGTH = 8192;
const MAX_COMMIT_PATHS = 1000;

/** No line breaks or control characters, and no `<`/`>`: they would break a commit's author line. */
const authorText = (field: string, maxLength: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(maxLength, `${field} must be at most ${maxLength} characters`)
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f<>]*$/, `${field} must not contain control characters, < or >`);

export const gitAuthorSchema = lazySchema(() =>
  z
    .object({ name: authorText('author.name', 200), email: authorText('author.email', 320) })
    .meta({ id: 'GitAuthor', examples: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] }),
);

/**
 * A branch name git accepts (git-check-ref-format, the usual subset): letters, digits and `._/-`,
 * no `..`, `//`, leading `-`, `.` or `/`, trailing `/`, `.` or `.lock`.
 */
const branchName = lazy(() =>
  z
    .string()
    .min(1, 'branch must not be empty')
    .max(255, 'branch must be at most 255 characters')
    .regex(/^[A-Za-z0-9._/-]+$/, 'branch must be a git branch name such as main or feature/x (letters, digits, ".", "_", "/", "-")')
    .refine(
      (name) => !/^[-./]|\.\.|\/\/|\/\.|[./]$|\.lock$/.test(name),
      'branch must be a git branch name: no "..", "//" or "/.", and no leading "-", "." or "/" nor trailing ".", "/" or ".lock"',
    ),
);

// git's ssh, git and file transports are refused here by name; the service parses the URL again (repository-remote.ts).
const remoteUrl = lazy(() =>
  z
    .url({ protocol: /^https?$/, error: 'url must be an http(s) URL of a git repository, e.g. https://github.com/owner/repo.git (ssh, git and file URLs are not supported)' })
    .max(MAX_REMOTE_URL_LENGTH, `url must be at most ${MAX_REMOTE_URL_LENGTH} characters`)
    .describe('http(s) URL of the repository; credentials written in it (https://user:token@host/…) are taken out and sealed like token'),
);

export const connectRepositoryBody = lazySchema(() =>
  z
    .object({
      url: remoteUrl(),
      branch: branchName().nullish().describe('the branch to pull and push; absent or null: the remote’s default branch, recorded by the clone'),
      token: z
        .string()
        .min(1, 'token must not be empty')
        .max(MAX_TOKEN_LENGTH, `token must be at most ${MAX_TOKEN_LENGTH} characters`)
        .nullish()
        .describe('access token, sealed at rest and never answered (only its last 4 characters); absent: the stored one is kept while the URL’s origin is unchanged; null removes it'),
      username: z
        .string()
        .min(1, 'username must not be empty')
        .max(255, 'username must be at most 255 characters')
        // eslint-disable-next-line no-control-regex
        .regex(/^[^:\u0000-\u001f\u007f]*$/, 'username must not contain ":" or control characters')
        .nullish()
        .describe('HTTP Basic username sent with the token; absent: the one the provider expects (see GET /workspaces/repository-integrations)'),
      provider: z.enum(REPOSITORY_PROVIDERS).optional().describe('absent: derived from the URL’s host (github.com, gitlab.com, bitbucket.org), else generic'),
      author: gitAuthorSchema.nullish().describe('who commits are by when a commit names no author; null removes it'),
    })
    .meta({ id: 'RepositoryConnect', examples: [{ url: 'https://github.com/octo/notes.git', branch: 'main', token: 'github_pat_…', author: { name: 'Ada Lovelace', email: 'ada@example.com' } }] }),
);

export const commitBody = lazySchema(() =>
  z
    .object({
      message: z
        .string({ error: (issue) => (issue.input === undefined ? 'message is required' : 'message must be a string') })
        .trim()
        .min(1, 'message must not be empty')
        .max(10_000, 'message must be at most 10000 characters'),
      author: gitAuthorSchema.optional().describe('absent: the connection’s author'),
      paths: z
        .array(safePathSchema({ field: 'paths', kind: 'relative' }))
        .min(1, 'paths must name at least one path (leave it out to commit every change)')
        .max(MAX_COMMIT_PATHS, `paths must name at most ${MAX_COMMIT_PATHS} paths`)
        .optional()
        .describe('commit only these files, or directories and everything under them; absent: every change'),
    })
    .meta({ id: 'RepositoryCommit', examples: [{ message: 'Update the notes', author: { name: 'Ada Lovelace', email: 'ada@example.com' } }] }),
);

const gitChangeSchema = lazySchema(() =>
  z
    .object({ path: z.string(), change: z.enum(['added', 'modified', 'deleted']).describe('against the last commit') })
    .meta({ id: 'GitChange' }),
);

const headFields = lazy(() => ({
  branch: z.string().nullable().describe('the checked-out branch; null when a tag or a commit is'),
  commit: z.string().nullable().describe('the checked-out commit (40 hex digits); null before the first commit'),
}));

export const repositoryStatusSchema = lazySchema(() =>
  z
    .object({ ...headFields(), changes: z.array(gitChangeSchema).describe('working tree changes, sorted by path; ignored files and .runloom/ left out') })
    .meta({ id: 'RepositoryStatus' }),
);

export const gitHeadSchema = lazySchema(() => z.object(headFields()).meta({ id: 'GitHead' }));

export const pullResultSchema = lazySchema(() =>
  z
    .object({ ...headFields(), outcome: z.enum(['up_to_date', 'fast_forward', 'merged']) })
    .meta({ id: 'RepositoryPull' }),
);

export const commitResultSchema = lazySchema(() =>
  z.object({ ...headFields(), changes: z.array(gitChangeSchema).describe('what the commit recorded') }).meta({ id: 'RepositoryCommitResult' }),
);

const connectionFields = lazy(() => ({
  workspace_id: z.string(),
  provider: z.enum(REPOSITORY_PROVIDERS),
  url: z.string().describe('without credentials'),
  branch: z.string().nullable(),
  username: z.string().describe('sent with the token: the connection’s, else the provider’s'),
  token: z.string().nullable().describe('masked (****abcd); null without a token'),
  author: gitAuthorSchema.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  cloned_at: z.string().nullable(),
  pulled_at: z.string().nullable(),
  pushed_at: z.string().nullable(),
}));

export const repositoryConnectionSchema = lazySchema(() => z.object(connectionFields()).meta({ id: 'RepositoryConnection' }));

export const repositoryStateSchema = lazySchema(() =>
  z
    .object({ ...connectionFields(), status: repositoryStatusSchema.nullable().describe('the working copy; null before the clone') })
    .meta({ id: 'Repository' }),
);

export const repositoryIntegrationSchema = lazySchema(() =>
  z
    .object({
      provider: z.enum(REPOSITORY_PROVIDERS),
      name: z.string(),
      hosts: z.array(z.string()).describe('hosts recognised as this provider when a connection names none'),
      auth: z.object({
        scheme: z.literal('basic'),
        username: z.string().describe('sent with a token when the connection gives no username'),
        token: z.string().describe('what token to give'),
      }),
      state: z.enum(['connected', 'available']).describe('connected while a workspace of the account is connected through it'),
      connected_workspaces: z.int(),
      workspaces_with_token: z.int(),
    })
    .meta({ id: 'RepositoryIntegration' }),
);
