import { DomainError } from '../errors';

/** Flag, variable and option that turn `GET /metrics` on, named in every refusal. */
const HOW_TO_ENABLE =
  'start the server with --metrics-token TOKEN (or RUNLOOM_METRICS_TOKEN; createRunloom({ metricsToken }) when embedded) and scrape with Authorization: Bearer TOKEN';

/**
 * `GET /metrics` spans every account, so it answers only the operators' own credential: the
 * bearer of the configured metrics token, never an account's access token (ARCHITECTURE.md,
 * "Limits and credentials outside accounts"). With no metrics token configured it is off: 403 saying how to turn it on.
 * A wrong or missing token is a 401 with a Bearer challenge of its own realm.
 */
export async function requireMetricsToken(authorization: string | null, metricsToken: string | undefined): Promise<void> {
  if (!metricsToken) {
    throw DomainError.forbidden(`GET /metrics is off on this server: it needs its own credential; ${HOW_TO_ENABLE}`);
  }
  const presented = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (presented === undefined || !(await constantTimeEqual(presented, metricsToken))) {
    throw DomainError.unauthorized(
      `GET /metrics needs the operators' metrics token (--metrics-token), not an account's access token: send Authorization: Bearer <metrics token>`,
      { realm: 'runloom-metrics' },
    );
  }
}

/**
 * Whether two strings are equal, in a time that depends on neither: both are hashed (SHA-256,
 * so their lengths do not show either) and the digests compared without an early exit.
 */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [left, right] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ]);
  const x = new Uint8Array(left);
  const y = new Uint8Array(right);
  let difference = 0;
  for (let index = 0; index < x.length; index += 1) difference |= x[index]! ^ y[index]!;
  return difference === 0;
}
