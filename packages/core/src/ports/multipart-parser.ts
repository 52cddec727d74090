/**
 * The `MultipartParser` port: reads a `multipart/form-data` body as a sequence of parts without
 * buffering it (the default adapter wraps `@fastify/busboy`).
 *
 * Parts come in body order. A file part's `content` must be read to its end or cancelled before
 * the next part is asked for: the parser reads the body only as fast as the consumer reads the
 * file. Stopping the iteration early (break, throw) releases the body.
 */
export const MultipartParser = Symbol.for('runloom.MultipartParser');

export type MultipartPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string | undefined; mimeType: string; content: ReadableStream<Uint8Array> };

export interface MultipartLimits {
  /** Largest text field value, in bytes. */
  fieldBytes: number;
  /** Most text fields. */
  fields: number;
  /** Most parts of any kind. */
  parts: number;
}

export interface MultipartParser {
  /** `contentType` is the request's header, boundary included. */
  parse(body: ReadableStream<Uint8Array>, contentType: string, limits: MultipartLimits): AsyncIterable<MultipartPart>;
}

/** The body is not well-formed multipart, or breaks a limit; the message says which. */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultipartError';
  }
}
