/** One frame of a `text/event-stream` answer. */
export interface EventStreamFrame {
  /** The `event:` field; undefined for unnamed frames (`message`). */
  event?: string;
  id?: string;
  data: string;
}

/**
 * The frames of a `text/event-stream` body as they arrive (the WHATWG parsing rules the server's
 * streams need: `data` lines joined by `\n`, comments and `retry` skipped, CRLF or LF line ends).
 */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncIterable<EventStreamFrame> {
  const decoder = new TextDecoder();
  let buffered = '';
  let frame: { event?: string; id?: string; data: string[] } = { data: [] };
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.search(/\r?\n/)) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + (buffered[end] === '\r' ? 2 : 1));
        if (line === '') {
          if (frame.data.length > 0) yield { event: frame.event, id: frame.id, data: frame.data.join('\n') };
          frame = { data: [] };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') frame.data.push(value);
        else if (field === 'event') frame.event = value;
        else if (field === 'id') frame.id = value;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
