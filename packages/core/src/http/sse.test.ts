import assert from 'node:assert/strict';
import { ManualClock } from '../testing/manual-clock';
import { encodeSseFrame, openSseStream, pacedSseResponse, type SseCloseReason, type SseStreamOptions, sseBodyOf } from './sse';

const decoder = new TextDecoder();

function open(options: Partial<SseStreamOptions> = {}) {
  const clock = new ManualClock();
  const reasons: SseCloseReason[] = [];
  const stream = openSseStream({ clock, retryMs: 500, onClose: (reason) => reasons.push(reason), ...options });
  const reader = stream.response.body!.getReader();
  const read = async (): Promise<string | undefined> => {
    const { done, value } = await reader.read();
    return done ? undefined : decoder.decode(value);
  };
  return { clock, stream, reader, read, reasons };
}

/**
 * A server adapter's view of `response`'s body (`sseBodyOf`): `attach` connects a writer that records
 * what it is given and takes `setRoom` more writes before its connection is full; `events` records
 * the end, a cut and the body's being done, in order.
 */
function recordingAdapter(response: Response) {
  const written: string[] = [];
  const events: string[] = [];
  let room = Number.POSITIVE_INFINITY;
  const body = sseBodyOf(response)!;
  body.onDone(() => events.push('done'));
  const attach = () =>
    body.attach({
      write: (bytes) => {
        written.push(decoder.decode(bytes));
        room -= 1;
        return room > 0;
      },
      end: () => events.push('end'),
      destroy: (error) => events.push(`destroy: ${error.message}`),
    });
  return { written, events, attach, setRoom: (writes: number) => (room = writes) };
}

describe('openSseStream', () => {
  it('encodes a frame with its event, its id and one data line per line of text', () => {
    assert.equal(decoder.decode(encodeSseFrame({ event: 'e', id: 7, data: 'one\ntwo\r\nthree' })), 'event: e\nid: 7\ndata: one\ndata: two\ndata: three\n\n');
    assert.equal(decoder.decode(encodeSseFrame({ data: '' })), 'data: \n\n');
    assert.throws(() => encodeSseFrame({ id: '1\n2', data: 'x' }), /id must be one line/);
    assert.throws(() => encodeSseFrame({ event: 'a\rb', data: 'x' }), /event must be one line/);
  });

  it('opens with retry, hands a burst of frames over in one chunk, and ends after them', async () => {
    const { stream, read, reasons } = open({ headers: { 'x-vercel-ai-ui-message-stream': 'v1' } });
    assert.equal(stream.response.headers.get('content-type'), 'text/event-stream');
    assert.equal(stream.response.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
    assert.equal(await read(), 'retry: 500\n\n');
    stream.send({ data: 'a' });
    stream.send(encodeSseFrame({ data: 'b' }));
    assert.equal(await read(), 'data: a\n\ndata: b\n\n');
    const waiting = read();
    assert.equal(stream.send({ data: 'c' }), true);
    assert.equal(await waiting, 'data: c\n\n', 'a reader waiting gets a frame at once');
    stream.send({ data: 'last' });
    stream.end();
    assert.equal(stream.send({ data: 'too late' }), false);
    assert.equal(await read(), 'data: last\n\n');
    assert.equal(await read(), undefined);
    assert.deepEqual(reasons, ['ended']);
  });

  it('sends a heartbeat comment on the clock while open', async () => {
    const { clock, read } = open({ heartbeatMs: 1000 });
    await read();
    await clock.advance(1000);
    assert.equal(await read(), ': heartbeat\n\n');
  });

  it('drops a client that leaves more than the limit unread: the stream errors and nothing more is queued', async () => {
    const { clock, stream, reader, reasons } = open({ maxBufferedBytes: 64 });
    assert.equal(stream.send({ data: 'x'.repeat(20) }), true);
    assert.equal(stream.send({ data: 'x'.repeat(40) }), false, 'past 64 unread bytes (the retry line counts)');
    assert.equal(stream.closed, true);
    assert.deepEqual(reasons, ['too-slow']);
    await assert.rejects(reader.read(), /more than 64 bytes unread/);
    assert.deepEqual(clock.pending, [], 'the heartbeat is cancelled');
  });

  it('ends when the request is aborted or the body cancelled, once', async () => {
    const controller = new AbortController();
    const aborted = open({ signal: controller.signal });
    controller.abort();
    assert.deepEqual(aborted.reasons, ['client-gone']);
    assert.deepEqual(aborted.clock.pending, []);
    assert.equal(aborted.stream.send({ data: 'x' }), false);

    const cancelled = open();
    await cancelled.reader.cancel();
    cancelled.stream.end();
    assert.deepEqual(cancelled.reasons, ['client-gone']);
    assert.deepEqual(cancelled.clock.pending, []);

    const already = open({ signal: AbortSignal.abort() });
    assert.equal(already.stream.closed, true);
    assert.deepEqual(already.reasons, ['client-gone']);
  });

  describe('written to an attached writer (how the server adapter delivers it)', () => {
    function attached(options: Partial<SseStreamOptions> = {}) {
      const opened = open(options);
      const { attach, ...adapter } = recordingAdapter(opened.stream.response);
      return { ...opened, ...adapter, delivery: attach() };
    }

    it('is the body of the streams openSseStream makes only', () => {
      assert.equal(sseBodyOf(new Response('x')), undefined);
      assert.notEqual(sseBodyOf(open().stream.response), undefined);
    });

    it('writes each frame as it is sent, the same bytes for every stream, and ends after them', () => {
      const { stream, written, events, reasons } = attached();
      const frame = encodeSseFrame({ data: 'shared' });
      stream.send(frame);
      stream.send({ data: 'b' });
      assert.deepEqual(written, ['retry: 500\n\n', 'data: shared\n\n', 'data: b\n\n']);
      stream.end();
      assert.deepEqual(events, ['end', 'done']);
      assert.deepEqual(reasons, ['ended']);
      assert.equal(stream.send({ data: 'too late' }), false);
    });

    it('holds frames while the connection is full, writes them when it drains, and ends only after them', () => {
      const { stream, written, events, delivery, setRoom } = attached();
      setRoom(1);
      stream.send({ data: 'fills it' });
      stream.send({ data: 'waits' });
      stream.end();
      assert.deepEqual(written, ['retry: 500\n\n', 'data: fills it\n\n']);
      assert.deepEqual(events, [], 'not ended while a frame waits');
      setRoom(Number.POSITIVE_INFINITY);
      delivery.resume();
      assert.deepEqual(written.slice(2), ['data: waits\n\n']);
      assert.deepEqual(events, ['end', 'done']);
    });

    it('drops a client whose connection stays full past the limit: the connection is cut', () => {
      const { stream, written, events, reasons, clock, setRoom } = attached({ maxBufferedBytes: 64 });
      setRoom(0);
      assert.equal(stream.send({ data: 'x'.repeat(20) }), true, 'written: the connection took it and is now full');
      assert.equal(stream.send({ data: 'x'.repeat(20) }), true, 'waits');
      assert.equal(stream.send({ data: 'x'.repeat(40) }), false, 'past 64 bytes waiting');
      assert.equal(written.length, 2);
      assert.deepEqual(events, ['destroy: the client left more than 64 bytes unread', 'done']);
      assert.deepEqual(reasons, ['too-slow']);
      assert.deepEqual(clock.pending, [], 'the heartbeat is cancelled');
    });

    it('stops when the client goes away, once', () => {
      const { stream, events, reasons, delivery, clock } = attached();
      delivery.cancel();
      delivery.cancel();
      assert.equal(stream.send({ data: 'x' }), false);
      assert.deepEqual(reasons, ['client-gone']);
      assert.deepEqual(events, ['done']);
      assert.deepEqual(clock.pending, []);
    });

    it('cuts the connection at once when the stream failed before it was attached', () => {
      const { stream } = open({ signal: AbortSignal.abort() });
      const cut: string[] = [];
      sseBodyOf(stream.response)!.attach({ write: () => true, end: () => cut.push('end'), destroy: (error) => cut.push(error.message) });
      assert.deepEqual(cut, ['the event stream ended before it was attached']);
    });
  });
});

describe('pacedSseResponse', () => {
  /** A source over a list of frames that grows, as a thread reply's buffer does; counts what was taken. */
  function paced() {
    const clock = new ManualClock();
    const frames: string[] = [];
    let position = 0;
    let ended = false;
    let takes = 0;
    let closes = 0;
    let waiting: (() => void)[] = [];
    const notify = (): void => {
      const listeners = waiting;
      waiting = [];
      for (const listener of listeners) listener();
    };
    const response = pacedSseResponse(
      {
        take() {
          takes += 1;
          const text = frames.slice(position).join('');
          position = frames.length;
          return { bytes: text === '' ? undefined : new TextEncoder().encode(text), ended };
        },
        whenReady(listener) {
          waiting.push(listener);
          return () => (waiting = waiting.filter((other) => other !== listener));
        },
        close: () => (closes += 1),
      },
      { clock, heartbeatMs: 1000, headers: { 'content-type': 'text/event-stream' } },
    );
    return {
      clock,
      response,
      send: (data: string) => {
        frames.push(`data: ${data}\n\n`);
        notify();
      },
      end: () => {
        ended = true;
        notify();
      },
      get takes() {
        return takes;
      },
      get closes() {
        return closes;
      },
      get waiting() {
        return waiting.length;
      },
    };
  }

  it('is read as response.body: what is ready in one chunk, then each later frame as it comes, then the end', async () => {
    const source = paced();
    source.send('a');
    source.send('b');
    const reader = source.response.body!.getReader();
    assert.equal(decoder.decode((await reader.read()).value), 'data: a\n\ndata: b\n\n');
    const waiting = reader.read();
    source.send('c');
    assert.equal(decoder.decode((await waiting).value), 'data: c\n\n');
    await source.clock.advance(1000);
    assert.equal(decoder.decode((await reader.read()).value), ': heartbeat\n\n');
    source.end();
    assert.equal((await reader.read()).done, true);
    assert.equal(source.closes, 1);
    assert.deepEqual(source.clock.pending, [], 'the heartbeat is cancelled');
  });

  describe('written to an attached writer', () => {
    function attached() {
      const source = paced();
      return { source, ...recordingAdapter(source.response) };
    }

    it('writes what is ready at once and each later frame as it is sent, then ends', async () => {
      const { source, written, events, attach } = attached();
      source.send('ready');
      attach();
      assert.deepEqual(written, ['data: ready\n\n']);
      source.send('next');
      assert.deepEqual(written.slice(1), ['data: next\n\n'], 'written during the send, not later');
      await source.clock.advance(1000);
      assert.equal(written.at(-1), ': heartbeat\n\n');
      source.end();
      assert.deepEqual(events, ['end', 'done']);
      assert.equal(source.closes, 1);
      assert.deepEqual(source.clock.pending, []);
    });

    it('takes nothing while the connection is full, then everything sent meanwhile in one write when it drains', async () => {
      const { source, written, events, attach, setRoom } = attached();
      setRoom(1);
      const delivery = attach();
      source.send('fills it');
      const takes = source.takes;
      source.send('waits');
      source.send('waits too');
      await source.clock.advance(1000);
      assert.equal(source.takes, takes, 'the frames stay in the source: no copy per slow client');
      assert.deepEqual(written, ['data: fills it\n\n'], 'no heartbeat into a full connection either');
      setRoom(Number.POSITIVE_INFINITY);
      delivery.resume();
      assert.deepEqual(written.slice(1), ['data: waits\n\ndata: waits too\n\n']);
      source.end();
      assert.deepEqual(events, ['end', 'done']);
    });

    it('stops waiting for the source when the client goes away, once', () => {
      const { source, events, attach } = attached();
      const delivery = attach();
      assert.equal(source.waiting, 1);
      delivery.cancel();
      delivery.cancel();
      assert.equal(source.waiting, 0);
      assert.equal(source.closes, 1);
      assert.deepEqual(events, ['done']);
      assert.deepEqual(source.clock.pending, []);
    });

    it('cuts the connection at once when the body was cancelled before it was attached', async () => {
      const { source, events, attach } = attached();
      await source.response.body!.cancel();
      attach();
      assert.deepEqual(events, ['done', 'destroy: the event stream ended before it was attached']);
    });
  });
});
