import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonSchema } from './json-schema-sample';

/** The parts of the served OpenAPI document that tests read. */
export interface OpenApiDocument {
  openapi: string;
  info: { version: string };
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
    securitySchemes: Record<string, { type: string; scheme?: string }>;
  };
  security: Record<string, unknown[]>[];
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface OpenApiMediaType {
  schema?: JsonSchema;
}

export interface OpenApiResponse {
  $ref?: string;
  description?: string;
  headers?: Record<string, { schema: JsonSchema }>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiOperation {
  operationId: string;
  security?: unknown[];
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
}

/** One operation of the document, with where it sits in it. */
export interface DocumentOperation {
  method: string;
  path: string;
  /** `METHOD /path`, as failures name it. */
  key: string;
  operation: OpenApiOperation;
  /** JSON pointer segments of the operation in the document (`paths`, path, method). */
  pointer: string[];
}

/** Every operation of the document, in document order. */
export function operationsOf(document: OpenApiDocument): DocumentOperation[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      key: `${method.toUpperCase()} ${path}`,
      operation,
      pointer: ['paths', path, method],
    })),
  );
}

/** A response as declared, with a `$ref` into `components.responses` followed; and the pointer of what it resolved to. */
export function resolveResponse(document: OpenApiDocument, response: OpenApiResponse, pointer: string[]): { response: OpenApiResponse; pointer: string[] } {
  if (!response.$ref) return { response, pointer };
  const name = /^#\/components\/responses\/(.+)$/.exec(response.$ref)?.[1];
  const resolved = name === undefined ? undefined : document.components.responses[name];
  if (!resolved) throw new Error(`unresolvable response ${response.$ref}`);
  return { response: resolved, pointer: ['components', 'responses', name!] };
}

/** A schema of the document by its `$ref` (`#/components/schemas/Run`); other schemas as they are. */
export function deref(document: OpenApiDocument, schema: JsonSchema | undefined): JsonSchema | undefined {
  const name = typeof schema?.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
  return name === undefined ? schema : deref(document, document.components.schemas[name]);
}

/**
 * `value` with every `$ref` into `components.schemas` replaced by a copy of the schema it names (a
 * reference back into a schema being inlined is kept), for tests that read schemas as plain objects.
 */
export function inlineSchemaRefs<T>(document: OpenApiDocument, value: T, inlining: ReadonlySet<string> = new Set()): T {
  if (Array.isArray(value)) return value.map((item) => inlineSchemaRefs(document, item, inlining)) as T;
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as JsonSchema).$ref;
  const name = typeof ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1] : undefined;
  if (name !== undefined && !inlining.has(name) && document.components.schemas[name]) {
    const { $ref: _ref, ...siblings } = value as JsonSchema;
    return { ...inlineSchemaRefs(document, document.components.schemas[name], new Set([...inlining, name])), ...siblings } as T;
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inlineSchemaRefs(document, item, inlining)])) as T;
}

const DOCUMENT_ID = 'openapi.json';

/** A JSON pointer (RFC 6901) of the segments. */
export function jsonPointer(segments: readonly string[]): string {
  return segments.map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/**
 * Ajv (draft 2020-12, the dialect of OpenAPI 3.1) holding the whole document, so a schema anywhere
 * in it compiles with its `$ref`s into `components` resolved. Formats are checked (uuid,
 * date-time, uri, …); `binary` is OpenAPI's mark for raw bytes.
 */
export class DocumentValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(document as object, DOCUMENT_ID);
  }

  /** The validator of the schema at `pointer` (segments) in the document. */
  at(pointer: readonly string[]): ValidateFunction {
    const ref = `${DOCUMENT_ID}#${jsonPointer(pointer)}`;
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    return validate;
  }

  errorsText(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors, { separator: '; ' });
  }
}
