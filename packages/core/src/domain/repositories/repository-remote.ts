import { DomainError } from '../errors';
import { REPOSITORY_HOSTS, type RepositoryProvider } from './repository-hosts';
import type { GitCredentials } from '../../ports/git-client';

/** Longest remote URL accepted, in characters. */
export const MAX_REMOTE_URL_LENGTH = 2048;

/** A remote URL as given, split into the URL kept (no credentials) and the credentials it carried. */
export interface ParsedRemote {
  /** `http(s)://host/path`, without user information or fragment. */
  url: URL;
  /** `https://user:token@host/…`: user; `https://token@host/…`: undefined. */
  username?: string;
  /** The password of the URL, or its user when it has no password (`https://token@host/…`). */
  token?: string;
}

/**
 * Parses a remote URL: `http://` or `https://` only (git's ssh and file transports never reach this
 * server's egress policy). Credentials written into the URL are taken out of it, to be sealed like
 * a `token`; no message ever repeats the URL, since it may carry them.
 */
export function parseRemote(input: string, field = 'url'): ParsedRemote {
  const refuse = (message: string): DomainError => DomainError.invalid(`${field}: ${message}`, [{ path: field, message }]);
  if (input.length > MAX_REMOTE_URL_LENGTH) throw refuse(`must be at most ${MAX_REMOTE_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw refuse('must be an absolute http(s) URL of a git repository, e.g. https://github.com/owner/repo.git');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refuse(`must be an http(s) URL; the ${url.protocol.slice(0, -1)} transport is not supported, use the repository's HTTPS URL`);
  }
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  url.username = '';
  url.password = '';
  url.hash = '';
  if (password) return { url, username: user || undefined, token: password };
  return user ? { url, token: user } : { url };
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** HTTP Basic credentials for a token: the given username, else the one the provider expects. */
export function tokenCredentials(provider: RepositoryProvider, token: string | undefined, username?: string | null): GitCredentials | undefined {
  return token === undefined ? undefined : { username: username ?? REPOSITORY_HOSTS[provider].username, password: token };
}
