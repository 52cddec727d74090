import assert from 'node:assert/strict';
import { decodeChatCompletionStream } from './chat-completion-stream';
import type { VendorStreamEvent } from './vendor-stream';

type Read = string | Uint8Array;

/**
 * A body whose chunks arrive as `arrivals` say: the chunks of one arrival queued together (as
 * fetch queues the HTTP chunks of one socket read), each arrival a turn of the event loop later.
 */
function bodyOf(arrivals: Read[][]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream({
    async pull(controller) {
      if (next > 0) await new Promise((resolve) => setImmediate(resolve));
      if (next === arrivals.length) return controller.close();
      for (const read of arrivals[next++]!) controller.enqueue(typeof read === 'string' ? encoder.encode(read) : read);
    },
  });
}

/** Decodes a body whose arrivals are `arrivals` (a string alone: one chunk arriving alone). */
async function decode(arrivals: (Read | Read[])[]): Promise<VendorStreamEvent[]> {
  const events: VendorStreamEvent[] = [];
  for await (const event of decodeChatCompletionStream(bodyOf(arrivals.map((arrival) => (Array.isArray(arrival) ? arrival : [arrival]))))) events.push(event);
  return events;
}

const chunk = (delta: object, finish: string | null = null, extras: object = {}): string =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...extras })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } })}\n\n`;

describe('decodeChatCompletionStream', () => {
  it('joins the text deltas that arrive together (in one chunk or in chunks queued at once) into one event, then the finish with usage', async () => {
    const events = await decode([
      chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Bon' }) + chunk({ content: 'jour' }),
      [chunk({ content: ' le' }), chunk({ content: ' monde' }), chunk({}, 'stop')],
      usageChunk + 'data: [DONE]\n\n',
    ]);
    assert.deepEqual(events, [
      { type: 'text-delta', text: 'Bonjour' },
      { type: 'text-delta', text: ' le monde' },
      { type: 'finish', finishReason: 'stop', usage: { input_tokens: 7, output_tokens: 3 } },
    ]);
  });

  it('reads the text-only chunks of one layout as a parse would, whatever their text, and chunks of any other shape by parsing them', async () => {
    const events = await decode([
      // "c" is also the id, which comes first: no layout is learned from that chunk.
      chunk({ content: 'c' }) + chunk({ content: 'é "quoted" \\ \u2028' }) + chunk({ content: 'c' }),
      // The content's place holds two members here, not one string.
      `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a","reasoning":"r"},"finish_reason":null}]}\n\n`,
      chunk({ content: '}' }, null, { usage: { prompt_tokens: 5, completion_tokens: 4 } }) + chunk({ content: '' }) + chunk({ content: 'end' }, 'stop'),
    ]);
    assert.deepEqual(events, [
      { type: 'text-delta', text: 'cé "quoted" \\ \u2028c' },
      { type: 'reasoning-delta', text: 'r' },
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: '}end' },
      { type: 'finish', finishReason: 'stop', usage: { input_tokens: 5, output_tokens: 4 } },
    ]);
    // A vendor whose every chunk differs besides its text (a nonce) has each one parsed.
    const nonces = await decode([['a', 'b', 'c', 'd', 'e'].map((text, index) => chunk({ content: text }, null, { obfuscation: 'x'.repeat(index) })).join('') + chunk({}, 'stop')]);
    assert.deepEqual(nonces[0], { type: 'text-delta', text: 'abcde' });
  });

  it('reads an event cut across reads (mid-character too), CRLF line ends and multi-line data', async () => {
    const euro = new TextEncoder().encode(chunk({ content: 'à 5 €' }));
    const cut = euro.length - 6;
    const events = await decode([euro.slice(0, cut), euro.slice(cut), ': keep-alive\r\n\r\n', `data: {"choices":[{"index":0,\r\ndata: "delta":{"content":"!"},"finish_reason":"length"}]}\r\n\r\n`]);
    assert.deepEqual(events, [
      { type: 'text-delta', text: 'à 5 €' },
      { type: 'text-delta', text: '!' },
      { type: 'finish', finishReason: 'length', usage: { input_tokens: 0, output_tokens: 0 } },
    ]);
  });

  it('reads characters of 2, 3 and 4 bytes cut by the end of a read at any byte', async () => {
    const bytes = new TextEncoder().encode(chunk({ content: 'é€😀' }) + chunk({}, 'stop'));
    const start = bytes.indexOf(0xc3);
    for (let cut = start; cut <= start + 9; cut += 1) {
      const events = await decode([bytes.slice(0, cut), bytes.slice(cut, cut + 1), bytes.slice(cut + 1)]);
      assert.deepEqual(events[0], { type: 'text-delta', text: 'é€😀' }, `cut at ${cut - start}`);
    }
  });

  it("drops a byte order mark that starts the stream and keeps one in the text, wherever a read cuts", async () => {
    const bytes = new TextEncoder().encode(`\uFEFF${chunk({ content: 'a\uFEFFb' })}${chunk({}, 'stop')}`);
    const mark = bytes.indexOf(0xef, 3);
    const events = await decode([bytes.slice(0, mark), bytes.slice(mark)]);
    assert.deepEqual(events[0], { type: 'text-delta', text: 'a\uFEFFb' });
  });

  it('assembles tool calls sent in pieces (OpenAI) or whole (Groq, Mistral), with usage from x_groq or the finishing chunk', async () => {
    const pieces = await decode([
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) + chunk({ tool_calls: [{ index: 0, function: { arguments: '"Lyon"}' } }] }),
      chunk({}, 'tool_calls', { x_groq: { usage: { prompt_tokens: 4, completion_tokens: 9 } } }),
    ]);
    assert.deepEqual(pieces, [
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Lyon' } },
      { type: 'finish', finishReason: 'tool-calls', usage: { input_tokens: 4, output_tokens: 9 } },
    ]);
    const whole = await decode([
      chunk({ tool_calls: [{ id: 'abcdefghi', function: { name: 'now', arguments: '' } }] }) +
        chunk({}, 'tool_calls', { usage: { prompt_tokens: 2, completion_tokens: 1 } }),
    ]);
    assert.deepEqual(whole, [
      { type: 'tool-call', toolCallId: 'abcdefghi', toolName: 'now', input: {} },
      { type: 'finish', finishReason: 'tool-calls', usage: { input_tokens: 2, output_tokens: 1 } },
    ]);
  });

  it('keeps reasoning and text apart in order, and takes Mistral content given as text parts', async () => {
    const events = await decode([chunk({ reasoning: 'think ' }) + chunk({ reasoning: 'more' }) + chunk({ content: [{ type: 'text', text: 'Done' }] }) + chunk({}, 'stop')]);
    assert.deepEqual(events, [
      { type: 'reasoning-delta', text: 'think more' },
      { type: 'text-delta', text: 'Done' },
      { type: 'finish', finishReason: 'stop', usage: { input_tokens: 0, output_tokens: 0 } },
    ]);
  });

  it('ends with an error after the text before it, for an error event or an event that is not JSON', async () => {
    const vendorError = await decode([chunk({ content: 'partial' }) + `data: {"error":{"message":"overloaded","type":"server_error"}}\n\n` + chunk({ content: 'never' })]);
    assert.deepEqual(vendorError.slice(0, 1), [{ type: 'text-delta', text: 'partial' }]);
    assert.equal(vendorError.length, 2);
    assert.equal(vendorError[1]!.type, 'error');
    assert.match(String((vendorError[1] as { error: Error }).error.message), /overloaded/);

    const broken = await decode(['data: {not json\n\n']);
    assert.equal(broken.length, 1);
    assert.match(String((broken[0] as { error: Error }).error.message), /not JSON/);
  });

  it('ends with an error, never a quiet finish, when the stream stops before a finish reason (a cut connection, or an answer that is not a stream)', async () => {
    for (const arrivals of [[chunk({ content: 'half a rep' })], ['{"ok":true}']]) {
      const events = await decode(arrivals);
      const last = events.at(-1) as { type: string; error: Error };
      assert.equal(last.type, 'error');
      assert.match(last.error.message, /ended before the reply finished/);
    }
  });

  it('reports a tool call whose arguments are not JSON as an error', async () => {
    const events = await decode([chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a":' } }] }, 'tool_calls')]);
    assert.equal(events[0]!.type, 'error');
    assert.match(String((events[0] as { error: Error }).error.message), /tool 'f' is not JSON/);
  });
});
