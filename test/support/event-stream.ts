/**
 * The body of an answer as text, for tests that read the answer of every route. An event stream
 * (`text/event-stream`) does not end while the client listens, so only what it sends at once (its
 * first chunk, the `retry:` line) is read, then the stream is cancelled.
 */
export async function answerText(response: Response): Promise<string> {
  if (!isEventStream(response) || response.body === null) return response.text();
  const reader = response.body.getReader();
  const first = await reader.read();
  await reader.cancel();
  return first.done ? '' : new TextDecoder().decode(first.value);
}

export function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === 'text/event-stream';
}
