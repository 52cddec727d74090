import { ConversionFailedError, ConverterUnavailableError } from '../../ports/document-converter';
import { WorkspaceConflictError, WorkspaceFileTooLargeError, WorkspaceNotFoundError, WorkspacePathError } from '../../ports/workspace-file-system';
import { DomainError } from '../errors';

/**
 * The one mapping of the file ports' errors to refusals: an unsafe path (or a symbolic link out of
 * the root) 400, a missing path 404, a file where a directory is needed (or an existing target)
 * 409, content over the limit 413, a document LibreOffice cannot read 400, no LibreOffice 501.
 * Anything else is a fault and stays as it is (500 without internals).
 */
function fileRefusal(error: unknown): unknown {
  if (error instanceof WorkspacePathError) return DomainError.invalid(error.message);
  if (error instanceof WorkspaceNotFoundError) return DomainError.notFound(`file or directory '${error.path}'`);
  if (error instanceof WorkspaceConflictError) return DomainError.conflict(error.message);
  if (error instanceof WorkspaceFileTooLargeError) return DomainError.tooLarge(`the content is over the upload limit of ${error.maxBytes} bytes`);
  if (error instanceof ConverterUnavailableError) return DomainError.notImplemented(error.message);
  if (error instanceof ConversionFailedError) return DomainError.invalid(`the document could not be converted to PDF: ${error.message}`);
  return error;
}

/** `work()`, with the file ports' errors turned into refusals (`fileRefusal`). */
export async function refusingFileErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw fileRefusal(error);
  }
}
