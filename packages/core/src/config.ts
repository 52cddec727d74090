/**
 * Settings of one Runloom instance, resolved from `createRunloom` options (and, for the server,
 * from CLI flags and `RUNLOOM_*` variables). Services read it through the `RunloomConfig` token.
 */
export const RunloomConfig = Symbol.for('runloom.RunloomConfig');

export interface RunloomConfig {
  /** Folder of the embedded store, blobs and keys. */
  dataDir: string;
  /** `postgres://…` selects PostgreSQL; undefined: the sql.js file in `dataDir`. */
  databaseUrl?: string;
  /** Folder holding one folder of files per workspace; undefined: `<dataDir>/workspaces`. */
  workspacesDir?: string;
  /**
   * Where resource bytes live: a local folder, or `s3://bucket/prefix` for an S3-compatible bucket
   * (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, region from AWS_REGION), which
   * several instances share; undefined: `<dataDir>/blobs`.
   */
  blobStore?: string;
  /** The S3-compatible service (MinIO, Ceph, …) of an `s3://` `blobStore`; undefined: AWS S3. */
  s3Endpoint?: string;
  /** Prefix of every route, '' for none. */
  basePath: string;
  tokenTtlSeconds: number;
  /** Requests per second per account (bursts of twice that); 0 turns limiting off. */
  rateLimit: number;
  jsonBodyLimitBytes: number;
  uploadLimitBytes: number;
  /** Lets every outbound request (model vendors, callbacks, agent HTTP tools) reach loopback, private, link-local and metadata addresses. */
  allowPrivateNetwork: boolean;
  /**
   * `host[:port]` destinations let in although their addresses are not public (a self-hosted
   * vendor on the LAN): a name as written in URLs, or an address in any spelling; no port means
   * every port (`--egress-allow`).
   */
  egressAllow: string[];
  callbackMaxAttempts: number;
  callbackInitialBackoffMs: number;
  /** How long a callback attempt waits for an answer before it counts as failed. */
  callbackTimeoutMs: number;
  /**
   * Upper bound of runs in flight at once in this process, every account together: executing or
   * waiting on a vendor, a tool or a nested run. A waiting run costs memory, not a worker, so this
   * bounds memory; past it runs wait queued, served fairly between accounts (ARCHITECTURE.md).
   */
  runConcurrency: number;
  /** Upper bound of one account's runs in flight at once in this process; its other runs wait their turn. */
  runConcurrencyPerAccount: number;
  /** A thread reply whose model sends nothing for this long is ended with an error chunk (its partial reply kept). */
  threadStreamIdleTimeoutMs: number;
  /** 32-byte key (base64) for encryption and URL signing; generated into `dataDir` when absent. */
  secretKey?: string;
  /**
   * The operators' credential for `GET /metrics` (sent as `Authorization: Bearer <token>`); the
   * figures span every account, so no account token opens it. Undefined: `/metrics` answers 403.
   */
  metricsToken?: string;
  /** `ACCOUNT:CLIENT_ID:SECRET` entries: clients created, or given this secret, at start. */
  bootstrapClients: string[];
  /**
   * Lets `shell` commands run programs on this machine, in the workspace folder
   * (`--enable-shell-commands`). Off by default: any account could otherwise run anything.
   */
  shellCommands: boolean;
}

export const defaultConfig: RunloomConfig = {
  dataDir: './.runloom-data',
  basePath: '',
  tokenTtlSeconds: 3600,
  rateLimit: 1000,
  jsonBodyLimitBytes: 1024 * 1024,
  uploadLimitBytes: 1024 * 1024 * 1024,
  allowPrivateNetwork: false,
  egressAllow: [],
  callbackMaxAttempts: 8,
  callbackInitialBackoffMs: 1000,
  callbackTimeoutMs: 10_000,
  runConcurrency: 10_000,
  runConcurrencyPerAccount: 5_000,
  threadStreamIdleTimeoutMs: 60_000,
  bootstrapClients: [],
  shellCommands: false,
};
