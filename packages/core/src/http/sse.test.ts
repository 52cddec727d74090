import assert from 'node:assert/strict';
import { ManualClock } from '../testing/manual-clock';
import { encodeSseFrame, openSseStream, type SseCloseReason, type SseStreamOptions } from './sse';

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
});
