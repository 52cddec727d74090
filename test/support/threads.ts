import assert from 'node:assert/strict';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import type { FakeVendorServer } from '../../packages/core/src/testing/fake-vendors';
import type { TestRunloom } from './harness';

/** A JSON request of `account` (default the harness's). */
export function json(method: string, body: unknown, account?: string): RequestInit & { account?: string } {
  return { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(account ? { account } : {}) };
}

/** A new workspace of `account` with `vendor`'s provider configured; answers its id. */
export async function workspaceWithVendor(t: TestRunloom, vendor: FakeVendorServer, account = 'acct-a'): Promise<string> {
  const workspaceId = await createWorkspace(t, account);
  const provider = await t.request(`/v1/llm-provider/${vendor.provider}`, json('PUT', { enabled: true, credentials: vendor.credentials }, account));
  assert.ok(provider.status === 200 || provider.status === 201, await provider.text());
  return workspaceId;
}

/** A new workspace of `account`, created through HTTP; answers its id. */
export async function createWorkspace(t: TestRunloom, account = 'acct-a'): Promise<string> {
  const created = await t.request('/workspaces', json('POST', { name: `threads of ${account}` }, account));
  assert.equal(created.status, 201, await created.clone().text());
  return ((await created.json()) as { data: { id: string } }).data.id;
}

/** Saves an empty thread through HTTP. */
export async function saveThread(t: TestRunloom, workspaceId: string, threadId: string, body: unknown = {}, account?: string): Promise<void> {
  const response = await t.request(`/workspace/${workspaceId}/thread/${threadId}/save`, json('POST', body, account));
  assert.ok(response.status === 201 || response.status === 200, await response.text());
}

/** Every chunk of a UI message stream, each checked by the `ai` package's own schema. */
export async function readChunks(body: ReadableStream<Uint8Array>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    assert.ok(value.success, `a chunk the ai package refuses: ${!value.success && value.error.message}`);
    chunks.push(value.value as UIMessageChunk);
  }
}

/** The assistant message `readUIMessageStream` assembles from the chunks, as `useChat` would. */
export async function assemble(chunks: readonly UIMessageChunk[]): Promise<UIMessage | undefined> {
  let last: UIMessage | undefined;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last;
}

/** The text of a UI message's text parts. */
export function textOf(message: { parts: readonly { type: string; text?: string }[] } | undefined): string {
  return (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text ?? ''] : [])).join('');
}

/** The SSE frame ids of a raw stream text. */
export function frameIds(text: string): number[] {
  return [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
}

/** A promise with its resolve function, to hold a fake vendor's stream half way (`gate`). */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const decoder = new TextDecoder();

/** Reads until the text so far contains `marker`; answers that text. */
export async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, marker: string): Promise<string> {
  let text = '';
  while (!text.includes(marker)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before ${marker}: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}

/** Reads to the end of the stream; answers the text. */
export async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}
