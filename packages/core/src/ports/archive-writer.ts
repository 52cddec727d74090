/**
 * Writes zip archives as streams (`GET /workspace/{id}/directory/download`): files are read one at
 * a time as the archive reaches them and the output is produced as the reader pulls it, so an
 * archive of any size costs memory for one file's buffers and one record per entry (the zip's
 * central directory), never its content. Files are stored, not deflated: the archive's exact size
 * is known before its first byte (a Content-Length, so clients show progress), and the server
 * spends no CPU compressing what is mostly compressed already (images, PDFs, office files). Every
 * adapter passes the contract suite in `adapters/archive-writer.contract.ts`.
 */
export const ArchiveWriter = Symbol.for('runloom.ArchiveWriter');

export interface ArchiveEntry {
  /** Path inside the archive, `/`-separated and relative. */
  path: string;
  type: 'file' | 'directory';
  mtime: Date;
  /** Bytes of a file (0 for a directory); its content must have exactly this many. */
  size: number;
  /** The file's bytes; called once, when the archive reaches the entry (files only). */
  open?: () => Promise<ReadableStream<Uint8Array>>;
}

export interface Archive {
  /** Exact bytes of the whole archive. */
  size: number;
  stream: ReadableStream<Uint8Array>;
}

export interface ArchiveWriter {
  /**
   * A zip of `entries`, in their order. Resolves once every entry is listed (rejecting when
   * `entries` fails); the stream then reads each file as it reaches it. A file that fails, or whose
   * length is not its `size`, errors the stream; cancelling the stream stops reading.
   */
  zip(entries: AsyncIterable<ArchiveEntry>): Promise<Archive>;
}
