export interface BootstrapClient {
  accountId: string;
  clientId: string;
  secret: string;
}

/**
 * Parses `ACCOUNT:CLIENT_ID:SECRET` entries (`--bootstrap-client`, `RUNLOOM_BOOTSTRAP_CLIENTS`).
 * The secret is everything after the second ':', so it may contain ':' itself. Errors name the
 * entry by position and never repeat it: it holds a secret.
 */
export function parseBootstrapClients(entries: readonly string[]): BootstrapClient[] {
  return entries.map((entry, index) => {
    const first = entry.indexOf(':');
    const second = first < 0 ? -1 : entry.indexOf(':', first + 1);
    const accountId = entry.slice(0, first);
    const clientId = entry.slice(first + 1, second);
    const secret = entry.slice(second + 1);
    if (first < 0 || second < 0 || !accountId || !clientId || !secret) {
      throw new Error(`bootstrap client #${index + 1} is invalid: expected ACCOUNT:CLIENT_ID:SECRET with none of the three empty`);
    }
    return { accountId, clientId, secret };
  });
}
