/**
 * An upload's body as the services read it: a failure of the client's side (the connection closed
 * halfway, a broken chunked encoding) is tagged, so it answers 400 rather than look like a fault
 * of the storage the bytes were going to.
 */

/** The upload's source failed: the client's body was cut off. */
export class UploadInterruptedError extends Error {
  override readonly name = 'UploadInterruptedError';
}

/** `content` with each failure of its own reads turned into an `UploadInterruptedError`. */
export function tagSourceFailures(content: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = content.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (error) {
          controller.error(new UploadInterruptedError((error as Error).message));
          return;
        }
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    // Read only when the consumer reads: the source keeps its own backpressure.
    { highWaterMark: 0 },
  );
}
