import { inject, injectable } from 'inversify';
import { RunloomConfig } from '../../config';
import { DomainError } from '../errors';
import { refuseTooDeep } from '../input/json-depth';
import { MultipartError, MultipartParser } from '../../ports/multipart-parser';
import type { Resource } from './resource-record';
import { type NewResource, newResourceSchema } from './resource-schemas';
import { type ReceivedContent, ResourceService } from './resource-service';

/** Text fields of an upload by name, each as often as it was given (form fields, query parameters). */
export type UploadFields = Map<string, string[]>;

const SINGLE_VALUED = ['name', 'directory_path', 'mime_type', 'original_uri', 'external_id', 'external_storage_type', 'created_by'] as const;
const MAX_FORM_FIELDS = 1000;

/**
 * The two ways `POST /v1/resources` carries content: a `multipart/form-data` form with a `file`
 * part, or the raw bytes. Both stream into the blob store; neither holds the body in memory.
 */
@injectable()
export class ResourceUploads {
  constructor(
    @inject(ResourceService) private readonly resources: ResourceService,
    @inject(MultipartParser) private readonly multipart: MultipartParser,
    @inject(RunloomConfig) private readonly config: RunloomConfig,
  ) {}

  /**
   * Raw bytes; `mime_type` is the body's Content-Type. Fields come from `fields` (the query). A
   * declared length over the limit is refused before anything is read.
   */
  async fromBytes(
    accountId: string,
    body: ReadableStream<Uint8Array> | null,
    headers: { contentType: string | null; contentLength: number | null },
    fields: UploadFields,
  ): Promise<Resource> {
    const { name, ...input } = toNewResource(fields);
    if (name === undefined) throw missingName();
    if (headers.contentLength !== null && headers.contentLength > this.config.uploadLimitBytes) {
      throw DomainError.tooLarge(`the content is over the upload limit of ${this.config.uploadLimitBytes} bytes`);
    }
    const mimeType = headers.contentType?.trim();
    const content = body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    return this.resources.upload(accountId, { ...input, name, ...(mimeType ? { mime_type: mimeType } : {}) }, content);
  }

  /**
   * A form with one `file` part; text fields may come before or after it, and override `defaults`
   * (the query). `name` defaults to the part's filename, `mime_type` to its Content-Type. Fields
   * already known when the file starts are checked before a byte of it is stored; the rest after
   * (the content is then dropped again if they are bad).
   */
  async fromForm(accountId: string, body: ReadableStream<Uint8Array>, contentType: string, defaults: UploadFields): Promise<Resource> {
    const fields: UploadFields = new Map();
    let file: { content: ReceivedContent; filename: string | undefined; mimeType: string } | undefined;
    let input: NewResource;
    try {
      const parts = this.multipart.parse(body, contentType, {
        fieldBytes: this.config.jsonBodyLimitBytes,
        fields: MAX_FORM_FIELDS,
        parts: MAX_FORM_FIELDS + 1,
      });
      for await (const part of parts) {
        if (part.kind === 'field') {
          fields.set(part.name, [...(fields.get(part.name) ?? []), part.value]);
          continue;
        }
        if (part.name !== 'file') throw DomainError.invalid(`send the content in a form part named file (got a file part named ${part.name})`);
        if (file) throw DomainError.invalid('send exactly one file part');
        newResourceSchema().partial().parse(toNewResource(merge(defaults, fields)));
        file = { content: await this.resources.receive(part.content), filename: part.filename, mimeType: part.mimeType };
      }
      if (!file) throw DomainError.invalid('the form has no file part; send the content in a part named file');
      const { name = file.filename, mime_type = file.mimeType, ...rest } = toNewResource(merge(defaults, fields));
      if (name === undefined) throw missingName();
      input = { ...rest, name, mime_type };
    } catch (error) {
      if (file) await this.resources.discard(file.content);
      if (error instanceof MultipartError) throw DomainError.invalid(error.message);
      throw error;
    }
    return this.resources.create(accountId, input, file.content);
  }
}

/** Upload fields from query parameters as the router hands them over. */
export function uploadFieldsFromQuery(query: Record<string, string | string[] | undefined>): UploadFields {
  const fields: UploadFields = new Map();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) fields.set(key, Array.isArray(value) ? value : [value]);
  }
  return fields;
}

function merge(defaults: UploadFields, fields: UploadFields): UploadFields {
  return new Map([...defaults, ...fields]);
}

/**
 * Text fields to resource fields: the last value of a single-valued field wins; empty values count
 * as absent; `tags` are repeated fields or one JSON array; `metadata` is JSON text.
 */
function toNewResource(fields: UploadFields): Partial<NewResource> {
  const input: Record<string, unknown> = {};
  for (const key of SINGLE_VALUED) {
    const value = fields.get(key)?.at(-1);
    if (value !== undefined && value !== '') input[key] = value;
  }
  const tags = (fields.get('tags') ?? []).filter((value) => value !== '');
  if (tags.length === 1 && tags[0]!.trimStart().startsWith('[')) input.tags = parseJsonField('tags', tags[0]!);
  else if (tags.length > 0) input.tags = tags;
  const metadata = fields.get('metadata')?.at(-1);
  if (metadata !== undefined && metadata !== '') input.metadata = parseJsonField('metadata', metadata);
  return input as Partial<NewResource>;
}

/** JSON text of a form field or query parameter, under the same depth limit as a JSON body. */
function parseJsonField(field: string, text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw DomainError.invalid(`${field} must be valid JSON: ${(error as Error).message}`, [{ path: field, message: 'not valid JSON' }]);
  }
  refuseTooDeep(value, 'body', field);
  return value;
}

function missingName(): DomainError {
  return DomainError.invalid('name is required: pass ?name= (or a name field, or a filename on the file part)', [
    { path: 'name', message: 'required' },
  ]);
}
