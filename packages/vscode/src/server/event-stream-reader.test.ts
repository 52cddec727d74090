import assert from 'node:assert/strict';
import { type EventStreamFrame, readEventStream } from './event-stream-reader';

/** A body delivered in the given pieces, as a network would split it. */
function body(...pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

async function frames(stream: ReadableStream<Uint8Array>): Promise<EventStreamFrame[]> {
  const read: EventStreamFrame[] = [];
  for await (const frame of readEventStream(stream)) read.push(frame);
  return read;
}

describe('readEventStream (the remote server\'s SSE answers)', () => {
  it('reads named frames with ids, skipping the retry line and heartbeat comments', async () => {
    assert.deepEqual(await frames(body('retry: 1000\n\n: heartbeat\n\nevent: workspace-event\nid: 42\ndata: {"type":"file.created"}\n\n')), [
      { event: 'workspace-event', id: '42', data: '{"type":"file.created"}' },
    ]);
  });

  it('joins data lines, takes CRLF line ends, and frames split anywhere by the network', async () => {
    assert.deepEqual(await frames(body('id: 1\r\nda', 'ta: first\r\ndata: second\r', '\n\r\ndata:[DONE]\n', '\n')), [
      { event: undefined, id: '1', data: 'first\nsecond' },
      { event: undefined, id: undefined, data: '[DONE]' },
    ]);
  });

  it('keeps multi-byte characters split between reads', async () => {
    const bytes = new TextEncoder().encode('data: héllo\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 8));
        controller.enqueue(bytes.slice(8));
        controller.close();
      },
    });
    assert.deepEqual(await frames(stream), [{ event: undefined, id: undefined, data: 'héllo' }]);
  });
});
