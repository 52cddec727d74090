import type { FileByteRange } from './workspace-file-system';

/**
 * Converts office documents to PDF (`GET /workspace/{id}/file/pdf`, docs/api.md#workspace-files).
 * Every adapter passes the contract suite in `adapters/document-converter.contract.ts`.
 *
 * Guarantees an adapter gives:
 * - Results are cached by the SHA-256 of the source: the same bytes convert once, and a request
 *   for bytes being converted waits for that conversion instead of starting another.
 * - A conversion that takes longer than the adapter's time limit is stopped and rejects with
 *   `ConversionFailedError`, as does a source the converter cannot read.
 * - Without the converting program the call rejects with `ConverterUnavailableError`, whose
 *   message says what to install.
 */
export const DocumentConverter = Symbol.for('runloom.DocumentConverter');

/** The source formats a converter reads. */
export type ConvertibleFormat = 'doc' | 'docx';

export interface ConvertedDocument {
  /** SHA-256 of the source bytes (lower-case hex): it names the cached PDF. */
  sourceSha256: string;
  /** Bytes of the PDF. */
  size: number;
  /** The PDF's bytes, or `range` of them. */
  read(range?: FileByteRange): Promise<ReadableStream<Uint8Array>>;
}

export interface DocumentConverter {
  /** The PDF of `source`, a document in `format`; `source` is read to its end (or cancelled). */
  toPdf(source: ReadableStream<Uint8Array>, format: ConvertibleFormat): Promise<ConvertedDocument>;
}

/** The program that converts is not installed here. */
export class ConverterUnavailableError extends Error {
  override readonly name = 'ConverterUnavailableError';
}

/** The source could not be converted (unreadable, or over the time limit); the message says which. */
export class ConversionFailedError extends Error {
  override readonly name = 'ConversionFailedError';
}
