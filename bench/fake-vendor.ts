import { type ChildServer, startChildServer } from './child-server';

export const FAKE_MODEL = 'gpt-4o-mini';
export const FAKE_API_KEY = 'sk-bench-0123456789abcdef';
export const FAKE_PROMPT = { system: 'You answer in one word.', messages: [{ role: 'user', content: 'Say hello.' }] };

/** The body a run sends to the vendor (runs call without streaming): what the peer's worker sends too. */
export const FAKE_REQUEST_BODY = JSON.stringify({ model: FAKE_MODEL, messages: [{ role: 'system', content: FAKE_PROMPT.system }, ...FAKE_PROMPT.messages] });

/**
 * A chat-completions server (its own process) answering every request with the same short
 * completion after `delayMs`. `GET /stats` answers `{open, maxOpen, served}`: requests being
 * answered now, the most at once since the last `POST /stats/reset`, and answered in all.
 */
function fakeOpenAiSource(delayMs: number): string {
  return `
const http = require('node:http');
const whole = JSON.stringify({
  id: 'chatcmpl-bench', created: 1700000000, model: '${FAKE_MODEL}', object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
});
let open = 0, maxOpen = 0, served = 0;
const server = http.createServer((req, res) => {
  if (req.url.startsWith('/stats')) {
    if (req.method === 'POST') maxOpen = open;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ open, maxOpen, served }));
    return;
  }
  open += 1;
  if (open > maxOpen) maxOpen = open;
  req.resume();
  req.on('end', () => {
    const answer = () => {
      open -= 1;
      served += 1;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(whole) });
      res.end(whole);
    };
    if (${delayMs} > 0) setTimeout(answer, ${delayMs}); else answer();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', 4096, () => console.log('fake openai listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0));
`;
}

export interface FakeVendor extends ChildServer {
  stats(): Promise<{ open: number; maxOpen: number; served: number }>;
  resetStats(): Promise<void>;
  /** One chat completion called directly, as a run would. */
  call(): Promise<void>;
}

export async function startFakeVendor(logDir: string, delayMs = 0): Promise<FakeVendor> {
  const server = await startChildServer(['-e', fakeOpenAiSource(delayMs)], logDir);
  return {
    ...server,
    async stats() {
      return (await (await fetch(`${server.url}/stats`)).json()) as { open: number; maxOpen: number; served: number };
    },
    async resetStats() {
      await (await fetch(`${server.url}/stats/reset`, { method: 'POST' })).text();
    },
    async call() {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${FAKE_API_KEY}`, 'content-type': 'application/json' },
        body: FAKE_REQUEST_BODY,
      });
      await response.text();
    },
  };
}
