/**
 * Writes zip archives as streams (`GET /workspace/{id}/directory/download`): entries are read one
 * at a time as the archive reaches them and the output is produced as the reader pulls it, so an
 * archive of any size costs memory for one file's buffers and one line per entry (the zip's
 * central directory), never its content. Every adapter passes the contract suite in
 * `adapters/archive-writer.contract.ts`.
 */
export const ArchiveWriter = Symbol.for('runloom.ArchiveWriter');

export interface ArchiveEntry {
  /** Path inside the archive, `/`-separated and relative. */
  path: string;
  type: 'file' | 'directory';
  mtime: Date;
  /** The file's bytes; called once, when the archive reaches the entry (files only). */
  open?: () => Promise<ReadableStream<Uint8Array>>;
}

export interface ArchiveWriter {
  /**
   * A zip of `entries`, in their order. `entries` is pulled as the archive is written; a failure
   * of it or of a file's stream errors the returned stream, and cancelling the returned stream
   * stops reading both.
   */
  zip(entries: AsyncIterable<ArchiveEntry>): ReadableStream<Uint8Array>;
}
