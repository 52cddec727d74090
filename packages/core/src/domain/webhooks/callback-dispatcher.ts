import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { DomainError } from '../errors';
import { Clock } from '../../ports/clock';
import { EgressRefusedError, HttpClient, HttpRequestError } from '../../ports/http-client';
import { type JobContext, JobQueue } from '../../ports/job-queue';
import { Logger } from '../../ports/logger';
import { SecretBox } from '../../ports/secret-box';
import type { Lifecycle } from '../lifecycle';
import { isFinished, type RunCallback, type RunRecord } from '../runs/run-record';
import { RunRepository } from '../runs/run-repository';
import { WebhookSecretService } from './webhook-secret-service';

export const CALLBACK_DELIVERY_JOB = 'callback.deliver';

/** The backoff doubles from `callbackInitialBackoffMs`, capped at 10 minutes, with ±20% jitter (docs/api.md#callbacks). */
const MAX_BACKOFF_MS = 10 * 60_000;
const BACKOFF_JITTER = 0.2;
/**
 * Deliveries in flight at once per instance. They mostly wait on receivers, so a few slow ones
 * (up to the timeout each) must not hold up everyone else's.
 */
export const CALLBACK_CONCURRENCY = 32;
/** What a receiver answers is not used; a little of it is read so the socket can be reused. */
const MAX_RESPONSE_BYTES = 4096;

/**
 * Headers a caller's `callback_headers` cannot set: the signature's own, and those that frame the
 * request (the client sets them).
 */
const RESERVED_HEADERS = new Set([
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'content-type',
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

/** The queued job: which run's callback to send, and the attempt budget it was scheduled with. */
interface CallbackDeliveryJob {
  account_id: string;
  run_id: string;
  max_attempts: number;
}

/** The Standard Webhooks payload of a finished run (docs/api.md#callbacks). */
export interface RunCompletedEvent {
  type: 'run.completed';
  timestamp: string;
  data: Pick<RunRecord, 'id' | 'runnable_id' | 'status' | 'outputs' | 'error' | 'completed_at'>;
}

interface AttemptOutcome {
  delivered: boolean;
  statusCode: number | null;
  /** Why it failed, for the log; never carries header values. */
  reason: string;
  /** Retrying cannot help (a refused destination, an unsendable request). */
  permanent: boolean;
}

/**
 * Run-completion callbacks (docs/api.md#callbacks): signed per Standard Webhooks with the account's
 * `whsec_` secret, sent with the run's `callback_headers`, retried with exponential backoff and
 * jitter through the durable `JobQueue` (so they survive restarts), their state kept in the run's
 * `callback` field. The run engine calls `validateCallbackUrl` at submission and `schedule` when a
 * run reaches a final status.
 */
@injectable()
export class CallbackDispatcher implements Lifecycle {
  readonly name = 'callbacks';

  constructor(
    @inject(JobQueue) private readonly queue: JobQueue,
    @inject(RunRepository) private readonly runs: RunRepository,
    @inject(WebhookSecretService) private readonly secrets: WebhookSecretService,
    @inject(SecretBox) private readonly secretBox: SecretBox,
    @inject(HttpClient) private readonly http: HttpClient,
    @inject(Clock) private readonly clock: Clock,
    @inject(Logger) private readonly logger: Logger,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  async start(): Promise<void> {
    this.queue.register<CallbackDeliveryJob>(CALLBACK_DELIVERY_JOB, (job, context) => this.deliver(job, context), { concurrency: CALLBACK_CONCURRENCY });
  }

  /** The `callback` a run is submitted with: nothing sent yet. */
  static pending(url: string): RunCallback {
    return { url, status: 'pending', attempts: 0, last_status_code: null };
  }

  /**
   * Refuses (400) a callback URL that is not absolute http(s), carries credentials, or whose host is
   * or resolves to a loopback, private, link-local, unique-local, CGNAT, multicast, unspecified or
   * metadata address, unless the egress policy lets it in (`--allow-private-network`, or an
   * `--egress-allow` entry). A name that does not resolve now is accepted: it is checked again,
   * on its addresses of the moment, at every delivery.
   */
  async validateCallbackUrl(url: string): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidCallbackUrl('callback_url must be an absolute http or https URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw invalidCallbackUrl(`callback_url must be an http or https URL, not ${parsed.protocol.slice(0, -1)}`);
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw invalidCallbackUrl('callback_url must not contain credentials (user:password@); send them in callback_headers');
    }
    if (this.config.allowPrivateNetwork) return;
    try {
      await this.http.checkDestination(url);
    } catch (error) {
      if (error instanceof EgressRefusedError) throw invalidCallbackUrl(`callback_url is refused: ${error.message}`);
      if (error instanceof HttpRequestError && (error.kind === 'dns' || error.kind === 'timeout')) return;
      if (error instanceof HttpRequestError) throw invalidCallbackUrl(`callback_url is invalid: ${error.message}`);
      throw error;
    }
  }

  /**
   * Queues the delivery of a finished run's callback. Idempotent per run: a delivery already queued
   * is not doubled (the job key is the run id), and a callback already delivered or failed is
   * not sent again.
   */
  async schedule(run: RunRecord): Promise<void> {
    if (run.callback === null || run.callback.status !== 'pending') return;
    if (!isFinished(run.status)) throw new Error(`run ${run.id} is ${run.status}: its callback is scheduled once it has finished`);
    const maxAttempts = this.config.callbackMaxAttempts;
    await this.queue.enqueue<CallbackDeliveryJob>(
      CALLBACK_DELIVERY_JOB,
      { account_id: run.account_id, run_id: run.id, max_attempts: maxAttempts },
      {
        key: run.id,
        retry: { maxAttempts, initialBackoffMs: this.config.callbackInitialBackoffMs, maxBackoffMs: MAX_BACKOFF_MS, jitter: BACKOFF_JITTER },
      },
    );
  }

  /**
   * One attempt. It is recorded on the run; a failure with attempts left is thrown so the queue
   * retries it after the backoff. An attempt cut short by shutdown is not counted: the queue hands
   * the job back and it is tried again after the restart.
   */
  private async deliver(job: CallbackDeliveryJob, context: JobContext): Promise<void> {
    const run = await this.runs.get(job.account_id, job.run_id);
    if (!run?.callback || run.callback.status !== 'pending') return;
    const outcome = await this.attempt(run, run.callback.url, context.signal);
    if (!outcome.delivered && context.signal.aborted) throw new Error(`callback attempt interrupted: ${outcome.reason}`);
    const attempts = run.callback.attempts + 1;
    const exhausted = attempts >= job.max_attempts || context.attempt >= job.max_attempts;
    const status = outcome.delivered ? 'delivered' : outcome.permanent || exhausted ? 'failed' : 'pending';
    await this.record(run, { url: run.callback.url, status, attempts, last_status_code: outcome.statusCode });
    const fields = { accountId: run.account_id, runId: run.id, attempt: attempts, statusCode: outcome.statusCode };
    if (status === 'delivered') {
      this.logger.info(fields, 'callback delivered');
    } else if (status === 'failed') {
      this.logger.warn({ ...fields, reason: outcome.reason }, 'callback failed; no more attempts');
    } else {
      throw new Error(`callback attempt ${attempts} of run ${run.id} failed: ${outcome.reason}`);
    }
  }

  private async attempt(run: RunRecord, url: string, signal: AbortSignal): Promise<AttemptOutcome> {
    try {
      const now = this.clock.now();
      const body = JSON.stringify(runCompletedEvent(run, now));
      const messageId = `msg_${run.id}`;
      const timestamp = Math.floor(now.getTime() / 1000).toString();
      const secret = await this.secrets.get(run.account_id);
      const headers: Record<string, string> = {
        ...(await this.customHeaders(run)),
        'content-type': 'application/json',
        'webhook-id': messageId,
        'webhook-timestamp': timestamp,
        'webhook-signature': `v1,${await hmacSha256Base64(secret, `${messageId}.${timestamp}.${body}`)}`,
      };
      const response = await this.http.post({ url, headers, body, signal, timeoutMs: this.config.callbackTimeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES });
      const delivered = response.status >= 200 && response.status < 300;
      return { delivered, statusCode: response.status, reason: delivered ? 'delivered' : `the receiver answered ${response.status}`, permanent: false };
    } catch (error) {
      if (error instanceof EgressRefusedError) return { delivered: false, statusCode: null, reason: error.message, permanent: true };
      if (error instanceof HttpRequestError) {
        const permanent = error.kind === 'invalid_url' || error.kind === 'invalid_request';
        return { delivered: false, statusCode: null, reason: `${error.kind}: ${error.message}`, permanent };
      }
      // Reading the secret or the sealed headers failed: worth another attempt.
      return { delivered: false, statusCode: null, reason: `the callback could not be prepared: ${error instanceof Error ? error.message : String(error)}`, permanent: false };
    }
  }

  /** The run's `callback_headers`, opened only now, minus the ones the delivery sets itself. */
  private async customHeaders(run: RunRecord): Promise<Record<string, string>> {
    if (run.sealed_callback_headers === null) return {};
    const stored = JSON.parse(await this.secretBox.open(run.sealed_callback_headers)) as Record<string, unknown>;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(stored)) {
      if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name] = String(value);
    }
    return headers;
  }

  /**
   * Writes the callback state onto the run as it is now (re-read, so nothing else the record holds
   * is overwritten), on condition that the run is still in the final status it was read in.
   */
  private async record(run: RunRecord, callback: RunCallback): Promise<void> {
    const current = (await this.runs.get(run.account_id, run.id)) ?? run;
    await this.runs.replace({ ...current, callback }, { status: current.status });
  }
}

export function runCompletedEvent(run: RunRecord, now: Date): RunCompletedEvent {
  return {
    type: 'run.completed',
    // When the event happened, so every attempt carries the same body.
    timestamp: run.completed_at ?? now.toISOString(),
    data: { id: run.id, runnable_id: run.runnable_id, status: run.status, outputs: run.outputs, error: run.error, completed_at: run.completed_at },
  };
}

const SECRET_PREFIX = 'whsec_';

/** Standard Webhooks signing: the key is the base64-decoded part of the secret after `whsec_`. */
export async function hmacSha256Base64(secret: string, content: string): Promise<string> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const keyBytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(content)));
  return btoa(String.fromCharCode(...signature));
}

function invalidCallbackUrl(message: string): DomainError {
  return DomainError.invalid(message, [{ path: 'callback_url', message }]);
}
