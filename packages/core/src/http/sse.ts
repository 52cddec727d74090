import type { Clock, Timer } from '../ports/clock';

/**
 * Server-sent events (the `text/event-stream` format of the HTML standard), written once for every
 * streaming route: workspace events, thread replies (the AI SDK UI message stream is SSE), command
 * output. A route opens a stream, sends frames as things happen and returns `stream.response`.
 *
 * What every stream does (docs/api.md#event-streams):
 * - its head and a first `retry:` line go out at once, so a client knows it is connected before
 *   the first event (the server adapter writes a body's first chunk as soon as it is there);
 * - a comment line every `heartbeatMs` (15 s) on the `Clock` port, so proxies and clients see a
 *   live connection;
 * - at most `maxBufferedBytes` wait unread per client: a client that does not read is dropped
 *   (its connection cut, so it reconnects with its last id) instead of growing memory, and no other
 *   client waits for it;
 * - it ends when the client goes away (the request's signal, or the body cancelled), stopping its
 *   timer and calling `onClose` so the route drops its subscription.
 * `Cache-Control: no-cache, no-transform` and `X-Accel-Buffering: no` keep proxies (nginx) and
 * compression middleware from holding frames back. A web-standard caller reads `response.body`; a
 * server adapter attaches an `SseWriter` instead (`sseBodyOf`), which costs a fan-out of one event
 * to many clients a socket write per client and nothing more.
 */

/** How streams behave; one binding for every streaming route, which tests rebind. */
export const SseSettings = Symbol.for('runloom.SseSettings');
export interface SseSettings {
  /** Between two heartbeat comments. */
  heartbeatMs: number;
  /** Bytes a client may leave unread before it is dropped. */
  maxBufferedBytes: number;
  /** The reconnection delay the stream asks clients to use (`retry:`). */
  retryMs: number;
}

export const DEFAULT_SSE_SETTINGS: SseSettings = { heartbeatMs: 15_000, maxBufferedBytes: 1024 * 1024, retryMs: 1000 };

export interface SseFrame {
  /** `event:` name; without it clients dispatch a `message` event. */
  event?: string;
  /** `id:`: what the client sends back as `Last-Event-ID` when it reconnects. */
  id?: string | number;
  /** The `data:` text; each of its lines becomes a `data:` line. */
  data: string;
}

/** Why a stream ended: `end()` was called, the client went away, or it fell too far behind. */
export type SseCloseReason = 'ended' | 'client-gone' | 'too-slow';

export interface SseStreamOptions extends Partial<SseSettings> {
  clock: Clock;
  /** The request's signal: when it aborts, the stream ends. */
  signal?: AbortSignal;
  /** Headers besides the event-stream ones (e.g. `x-vercel-ai-ui-message-stream: v1`). */
  headers?: Record<string, string>;
  /** Called once, when the stream ends for any reason. */
  onClose?: (reason: SseCloseReason) => void;
}

export interface SseStream {
  /** The 200 answer carrying the stream: what the route handler returns. */
  readonly response: Response;
  /**
   * Queues a frame, or the bytes of one (`encodeSseFrame`: a frame sent to many clients is
   * encoded once); false (and nothing queued) once the stream has ended.
   */
  send(frame: SseFrame | Uint8Array): boolean;
  /** Ends the stream after the frames already queued. */
  end(): void;
  readonly closed: boolean;
}

/**
 * Where a server adapter has a stream's bytes written instead of reading `response.body`
 * (`sseBodyOf`): each frame goes to the connection as it is sent, the same bytes for every client
 * of an event, with no web stream read per frame.
 */
export interface SseWriter {
  /** Takes the bytes; false when the connection's buffer is full: nothing more comes until `SseDelivery.resume`. */
  write(bytes: Uint8Array): boolean;
  /** Every frame is written: the answer is complete. */
  end(): void;
  /** The stream failed (the client fell too far behind): cut the connection. */
  destroy(error: Error): void;
}

/** What the adapter tells a stream it writes: the connection drained, or the client went away. */
export interface SseDelivery {
  resume(): void;
  cancel(): void;
}

/** The body of a stream's `response`, for whoever delivers it (`sseBodyOf`). */
export interface SseBody {
  /** Writes the stream to `writer` from now on; its `response.body` is then left unread. Once. */
  attach(writer: SseWriter): SseDelivery;
  /** `listener` runs once the body is done, however it ends (written out, failed, cancelled). */
  onDone(listener: () => void): void;
}

const sseBodies = new WeakMap<Response, SseBody>();

/** The body of a response `openSseStream` or `pacedSseResponse` made, or undefined for any other response. */
export function sseBodyOf(response: Response): SseBody | undefined {
  return sseBodies.get(response);
}

/**
 * The side of a stream's body a server adapter sees (`SseBody`), one for `openSseStream` and
 * `pacedSseResponse` alike: the one writer it may attach, whether that connection is full, and the
 * listeners of the body's end. The stream says how it delivers (`deliver`: write what is ready) and
 * how it stops when the client goes away (`cancel`).
 */
class AttachableSseBody implements SseBody {
  writer: SseWriter | undefined;
  /** The writer's connection is full: nothing more is written until the adapter resumes it. */
  full = false;
  done = false;
  private readonly doneListeners: (() => void)[] = [];

  constructor(
    private readonly deliver: () => void,
    private readonly cancel: () => void,
  ) {}

  attach(writer: SseWriter): SseDelivery {
    if (this.writer) throw new Error('an event stream is written to one connection');
    this.writer = writer;
    if (this.done) writer.destroy(new Error('the event stream ended before it was attached'));
    else this.deliver();
    return {
      resume: () => {
        this.full = false;
        if (!this.done) this.deliver();
      },
      cancel: this.cancel,
    };
  }

  onDone(listener: () => void): void {
    if (this.done) listener();
    else this.doneListeners.push(listener);
  }

  /** Writes `bytes` to the attached writer, noting whether its connection is now full. */
  write(bytes: Uint8Array): void {
    this.full = !this.writer!.write(bytes);
  }

  /** The body is done, however it ended: its listeners run, once. */
  markDone(): void {
    if (this.done) return;
    this.done = true;
    for (const listener of this.doneListeners) listener();
  }
}

const encoder = new TextEncoder();
/** The comment line every stream sends each `heartbeatMs`. */
const SSE_HEARTBEAT = encoder.encode(': heartbeat\n\n');

/**
 * Frames wait in `unread` until the consumer takes them: either a reader of `response.body` (a
 * read hands everything unread over as one chunk) or an attached `SseWriter` (each frame written
 * while the connection takes it). What waits counts against `maxBufferedBytes` either way.
 */
export function openSseStream(options: SseStreamOptions): SseStream {
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_SSE_SETTINGS.maxBufferedBytes;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  /** Frames the client has not taken yet, oldest first. */
  let unread: Uint8Array[] = [];
  let unreadBytes = 0;
  /** A read waiting for the next frame: its pull's promise. */
  let waitingRead: (() => void) | undefined;
  let closed = false;
  let ended = false;
  let heartbeat: Timer | undefined;
  const attachable = new AttachableSseBody(
    () => deliver(),
    () => cancel(),
  );
  const finish = (reason: SseCloseReason): void => {
    if (closed) return;
    closed = true;
    heartbeat?.cancel();
    options.signal?.removeEventListener('abort', onAbort);
    options.onClose?.(reason);
  };
  /** Ends the stream with an error: what is unread is discarded and the server adapter cuts the connection. */
  const fail = (reason: SseCloseReason, message: string): void => {
    finish(reason);
    unread = [];
    if (attachable.done) return;
    const error = new Error(message);
    if (attachable.writer) attachable.writer.destroy(error);
    else controller.error(error);
    attachable.markDone();
  };
  const cancel = (): void => {
    finish('client-gone');
    unread = [];
    attachable.markDone();
  };
  const onAbort = (): void => fail('client-gone', 'the client went away');
  /** Hands what is unread to the consumer if it can take it, and completes the body once ended with nothing left. */
  const deliver = (): void => {
    if (attachable.writer) {
      while (!attachable.full && unread.length > 0) {
        const bytes = unread.shift()!;
        unreadBytes -= bytes.byteLength;
        attachable.write(bytes);
      }
      if (ended && unread.length === 0) {
        attachable.writer.end();
        attachable.markDone();
      }
      return;
    }
    if (!waitingRead || (unread.length === 0 && !ended)) return;
    if (unread.length > 0) handOver();
    else {
      controller.close();
      attachable.markDone();
    }
    const read = waitingRead;
    waitingRead = undefined;
    read();
  };
  /** Hands everything unread to the reader as one chunk: a burst of frames costs the socket one write. */
  const handOver = (): void => {
    const chunk = unread.length === 1 ? unread[0]! : concat(unread, unreadBytes);
    unread = [];
    unreadBytes = 0;
    controller.enqueue(chunk);
  };
  /** Queues bytes; drops the client when they bring its unread bytes past the limit. */
  const enqueue = (bytes: Uint8Array): boolean => {
    if (closed) return false;
    unread.push(bytes);
    unreadBytes += bytes.byteLength;
    if (unreadBytes > maxBufferedBytes) {
      fail('too-slow', `the client left more than ${maxBufferedBytes} bytes unread`);
      return false;
    }
    deliver();
    return true;
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(streamController) {
        controller = streamController;
      },
      // Called when the reader wants more (highWaterMark 0: nothing is pulled ahead of it).
      pull() {
        if (unread.length > 0) handOver();
        else if (ended) {
          controller.close();
          attachable.markDone();
        } else return new Promise<void>((resolve) => (waitingRead = resolve));
        return undefined;
      },
      cancel,
    },
    { highWaterMark: 0 },
  );
  enqueue(encoder.encode(`retry: ${options.retryMs ?? DEFAULT_SSE_SETTINGS.retryMs}\n\n`));
  if (options.signal?.aborted) onAbort();
  else {
    options.signal?.addEventListener('abort', onAbort, { once: true });
    heartbeat = options.clock.setInterval(() => enqueue(SSE_HEARTBEAT), options.heartbeatMs ?? DEFAULT_SSE_SETTINGS.heartbeatMs);
  }

  const response = new Response(body, {
    status: 200,
    headers: {
      ...options.headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    },
  });
  sseBodies.set(response, attachable);
  return {
    response,
    send: (frame) => enqueue(frame instanceof Uint8Array ? frame : encodeSseFrame(frame)),
    end() {
      if (closed) return;
      finish('ended');
      ended = true;
      deliver();
    },
    get closed() {
      return closed;
    },
  };
}

/** What a stream read at its client's pace has ready: its frames (undefined when none) and whether it ends after them. */
export interface PacedFrames {
  bytes: Uint8Array | undefined;
  ended: boolean;
}

/** Frames a client takes at its own pace (`pacedSseResponse`): nothing waits for it, nothing drops it. */
export interface PacedSseSource {
  /** Everything ready since the last take, as one run of frames. */
  take(): PacedFrames;
  /** Calls `listener` once, when more is ready or the stream has ended; the returned function forgets it. */
  whenReady(listener: () => void): () => void;
  /** The client has everything, or went away: called once. */
  close(): void;
}

export interface PacedSseOptions {
  clock: Clock;
  heartbeatMs: number;
  /** The answer's headers (an event-stream content type among them). */
  headers: Record<string, string>;
}

/**
 * A 200 answer streaming `source` to one client, which takes its frames when it can: what is
 * ready goes out in one write, then the next once it is ready and the connection has room. The
 * source keeps what the client has not taken (one buffer for every client of a thread reply), so a
 * slow client costs no copy and is never dropped, unlike `openSseStream`'s. A heartbeat comment
 * every `heartbeatMs` on the clock, as on every stream. Read as `response.body`, or written to an
 * adapter's `SseWriter` (`sseBodyOf`): a frame then costs one socket write and no web stream.
 */
export function pacedSseResponse(source: PacedSseSource, options: PacedSseOptions): Response {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  /** Forgets the wait for the next frames, when there is one. */
  let stopWaiting: (() => void) | undefined;
  const attachable = new AttachableSseBody(
    () => deliver(),
    () => finish(),
  );
  const heartbeat = options.clock.setInterval(() => {
    if (!attachable.writer) controller.enqueue(SSE_HEARTBEAT);
    else if (!attachable.full) attachable.write(SSE_HEARTBEAT);
  }, options.heartbeatMs);
  const finish = (): void => {
    if (attachable.done) return;
    heartbeat.cancel();
    stopWaiting?.();
    source.close();
    attachable.markDone();
  };
  /** Writes what is ready while the connection takes it, then waits for more (or ends). */
  const deliver = (): void => {
    stopWaiting?.();
    stopWaiting = undefined;
    while (!attachable.full && !attachable.done) {
      const frames = source.take();
      if (frames.bytes) attachable.write(frames.bytes);
      if (frames.ended) {
        attachable.writer!.end();
        finish();
        return;
      }
      if (!frames.bytes) {
        stopWaiting = source.whenReady(deliver);
        return;
      }
    }
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(streamController) {
        controller = streamController;
      },
      async pull() {
        let frames = source.take();
        while (!frames.bytes && !frames.ended) {
          await new Promise<void>((resolve) => (stopWaiting = source.whenReady(resolve)));
          frames = source.take();
        }
        if (frames.bytes) controller.enqueue(frames.bytes);
        if (frames.ended) {
          controller.close();
          finish();
        }
      },
      cancel: finish,
    },
    { highWaterMark: 0 },
  );
  const response = new Response(body, { status: 200, headers: options.headers });
  sseBodies.set(response, attachable);
  return response;
}

/** The bytes of one frame; an `event` or `id` with a line break would end the frame early and is refused. */
export function encodeSseFrame(frame: SseFrame): Uint8Array {
  let text = '';
  if (frame.event !== undefined) text += `event: ${singleLine(frame.event, 'event')}\n`;
  if (frame.id !== undefined) text += `id: ${singleLine(String(frame.id), 'id')}\n`;
  for (const line of frame.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return encoder.encode(`${text}\n`);
}

function singleLine(value: string, field: string): string {
  if (/[\r\n\0]/.test(value)) throw new Error(`an SSE ${field} must be one line without NUL`);
  return value;
}

function concat(chunks: readonly Uint8Array[], byteLength: number): Uint8Array {
  const joined = new Uint8Array(byteLength);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}
