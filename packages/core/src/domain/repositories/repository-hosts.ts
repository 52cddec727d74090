/**
 * The hosting integrations a repository connection goes through (docs/api.md#repositories): how
 * each host authenticates a token over HTTPS. Every one speaks plain git over HTTP(S); what
 * differs is the username a host expects beside a token in HTTP Basic.
 */
export const REPOSITORY_PROVIDERS = ['generic', 'github', 'gitlab', 'bitbucket'] as const;

export type RepositoryProvider = (typeof REPOSITORY_PROVIDERS)[number];

export interface RepositoryHost {
  provider: RepositoryProvider;
  name: string;
  /** Hosts recognised as this provider when a connection names none. */
  hosts: readonly string[];
  /** The HTTP Basic username sent with a token when the connection gives none. */
  username: string;
  /** What token to give, for people. */
  token: string;
}

export const REPOSITORY_HOSTS: Readonly<Record<RepositoryProvider, RepositoryHost>> = {
  generic: {
    provider: 'generic',
    name: 'Git over HTTP(S)',
    hosts: [],
    username: 'git',
    token: 'the password or access token of the git server; give username too when the server checks it (Gitea, Forgejo: your user name)',
  },
  github: {
    provider: 'github',
    name: 'GitHub',
    hosts: ['github.com'],
    // GitHub takes any username with a personal access token, and exactly this one with an App installation token.
    username: 'x-access-token',
    token: 'a personal access token (fine-grained: Contents read, and write to push) or a GitHub App installation token',
  },
  gitlab: {
    provider: 'gitlab',
    name: 'GitLab',
    hosts: ['gitlab.com'],
    username: 'oauth2',
    token: 'a personal, project or group access token with read_repository (and write_repository to push), or an OAuth token',
  },
  bitbucket: {
    provider: 'bitbucket',
    name: 'Bitbucket',
    hosts: ['bitbucket.org'],
    username: 'x-token-auth',
    token: 'a repository, project or workspace access token; an app password needs username: your Bitbucket username',
  },
};

/** The provider of a remote whose connection names none: by its host, else generic. */
export function providerOf(url: URL): RepositoryProvider {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const known = Object.values(REPOSITORY_HOSTS).find((entry) => entry.hosts.some((name) => host === name || host === `www.${name}`));
  return known?.provider ?? 'generic';
}
