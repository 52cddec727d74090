import * as z from 'zod';
import { apiErrorBody } from './error-schema';
import type { BodySpec, RouteDefinition } from './route';

type JsonSchema = Record<string, unknown>;

const COMPONENT_SCHEMAS = '#/components/schemas/';
const COMPONENT_RESPONSES = '#/components/responses/';
const JSON_MEDIA_TYPE = 'application/json';
/** Raw bytes, as OpenAPI declares a file. */
const BINARY: JsonSchema = { type: 'string', format: 'binary' };

/**
 * Converts zod schemas to the JSON Schema dialect of OpenAPI 3.1 (draft 2020-12). A schema named
 * with `.meta({ id })` becomes one entry of `components.schemas`, referenced by `$ref` wherever it
 * appears, so generated clients get a named type for it. Where one name converts differently as
 * request and as response (defaults are optional in a request, present in a response), the
 * request's shape is named `<id>Input`.
 */
class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  /** Each component's JSON as zod gave it, before its `$ref`s were renamed: equal text, same component. */
  private readonly sources = new Map<string, string>();

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    const { $schema: _dialect, $defs, ...root } = converted;
    const definitions = ($defs ?? {}) as Record<string, JsonSchema>;
    const names = new Map<string, string>();
    for (const [name, definition] of Object.entries(definitions)) names.set(name, this.nameFor(name, JSON.stringify(definition), io));
    const rename = (value: unknown): unknown => renameRefs(value, names);
    for (const [name, definition] of Object.entries(definitions)) {
      const component = names.get(name)!;
      if (!(component in this.schemas)) {
        this.sources.set(component, JSON.stringify(definition));
        const renamed = rename(definition) as JsonSchema;
        this.schemas[component] = io === 'input' ? (defaultsDescribed(renamed) as JsonSchema) : renamed;
      }
    }
    return rename(root) as JsonSchema;
  }

  /** `name` unless it already names a different schema; then `<name>Input`/`<name>Output`, then numbered. */
  private nameFor(name: string, source: string, io: 'input' | 'output'): string {
    const base = name.replace(/[^A-Za-z0-9._-]/g, '_');
    const candidates = [base, `${base}${io === 'input' ? 'Input' : 'Output'}`];
    for (let index = 2; ; index++) {
      const candidate = candidates.shift() ?? `${base}${index}`;
      const existing = this.sources.get(candidate);
      if (existing === undefined || existing === source) return candidate;
    }
  }
}

function renameRefs(value: unknown, names: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => renameRefs(item, names));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (key === '$ref' && typeof item === 'string') {
        if (item === '#') throw new Error('a schema without an id refers to itself: name it with .meta({ id })');
        const name = /^#\/\$defs\/(.+)$/.exec(item)?.[1];
        if (name !== undefined) return [key, `${COMPONENT_SCHEMAS}${names.get(name) ?? name}`];
      }
      return [key, renameRefs(item, names)];
    }),
  );
}

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const SUBSCHEMA_KEYWORDS = new Set(['items', 'prefixItems', 'additionalProperties', 'propertyNames', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'contains']);

/**
 * A request schema with each `default` moved into its description. In a named component, client
 * generators (openapi-typescript) read `default` as "always present", which is true of a response
 * but makes a request field that may be left out required.
 */
function defaultsDescribed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(defaultsDescribed);
  if (schema === null || typeof schema !== 'object') return schema;
  const { default: fallback, ...rest } = schema as JsonSchema;
  const described = Object.fromEntries(
    Object.entries(rest).map(([keyword, value]) => {
      // Maps of named subschemas: the names are not keywords (a property may be called "default").
      if (SCHEMA_MAPS.has(keyword) && value !== null && typeof value === 'object') {
        return [keyword, Object.fromEntries(Object.entries(value).map(([name, subschema]) => [name, defaultsDescribed(subschema)]))];
      }
      return [keyword, SUBSCHEMA_KEYWORDS.has(keyword) ? defaultsDescribed(value) : value];
    }),
  );
  if (!('default' in schema)) return described;
  const note = `default: ${JSON.stringify(fallback)}`;
  return { ...described, description: typeof rest.description === 'string' ? `${rest.description} (${note})` : note };
}

const ERROR_REF: JsonSchema = { $ref: `${COMPONENT_SCHEMAS}Error` };

function errorResponse(description: string, headers?: Record<string, JsonSchema>): JsonSchema {
  return { description, ...(headers ? { headers } : {}), content: { [JSON_MEDIA_TYPE]: { schema: ERROR_REF } } };
}

const header = (description: string, schema: JsonSchema = { type: 'string' }): JsonSchema => ({ description, schema });

/**
 * Answers the router (or the HTTP server under it) can give on any operation they apply to,
 * whatever the route's table says: declared once in `components.responses`.
 */
const GENERIC_RESPONSES = {
  BadRequest: {
    status: 400,
    response: errorResponse('invalid input (query, body or URL): details name each invalid field'),
  },
  Unauthorized: {
    status: 401,
    response: errorResponse('missing, invalid or expired bearer token', {
      'WWW-Authenticate': header('Bearer'),
    }),
  },
  NotFound: { status: 404, response: errorResponse('no such record in the account (an id of another account reads as missing)') },
  MethodNotAllowed: {
    status: 405,
    response: errorResponse('another method on this path: Allow lists the methods it serves', {
      Allow: header('the methods this path serves'),
    }),
  },
  PayloadTooLarge: { status: 413, response: errorResponse('the body is over the limit (JSON or upload)') },
  UnsupportedMediaType: { status: 415, response: errorResponse('the body is of a media type this operation does not take') },
  TooManyRequests: {
    status: 429,
    response: errorResponse("over the account's rate limit", {
      'Retry-After': header('seconds to wait', { type: 'integer', minimum: 0 }),
    }),
  },
  RequestHeaderFieldsTooLarge: { status: 431, response: { description: 'the request headers are over the server limit (no body)' } },
  InternalError: { status: 500, response: errorResponse('a server fault (a bug): the error envelope, never a stack trace') },
} as const satisfies Record<string, { status: number; response: JsonSchema }>;

type GenericResponse = keyof typeof GENERIC_RESPONSES;

/** Which generic answers apply to a route. */
function genericResponsesOf(definition: RouteDefinition): GenericResponse[] {
  const applying: GenericResponse[] = ['BadRequest', 'MethodNotAllowed', 'RequestHeaderFieldsTooLarge', 'InternalError'];
  if (!definition.public) applying.push('Unauthorized', 'TooManyRequests');
  if (definition.path.includes('{')) applying.push('NotFound');
  if (definition.body) applying.push('PayloadTooLarge', 'UnsupportedMediaType');
  return applying;
}

function objectParameters(components: SchemaComponents, schema: z.ZodType | undefined, location: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const converted = components.convert(schema, 'input');
  const properties = (converted.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((converted.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(description ? { description } : {}),
      schema: propertySchema,
    };
  });
}

/** The schema of a non-JSON body declared by its media type: text is a string, anything else bytes. */
function mediaTypeSchema(mediaType: string): JsonSchema {
  return mediaType.startsWith('text/') ? { type: 'string' } : BINARY;
}

function requestBody(components: SchemaComponents, body: BodySpec): JsonSchema {
  if ('json' in body) {
    const schema = components.convert(body.json, 'input');
    return {
      required: !body.optional,
      content: {
        [JSON_MEDIA_TYPE]: { schema },
        ...(body.form ? { 'application/x-www-form-urlencoded': { schema } } : {}),
      },
    };
  }
  const { mediaTypes, description, schemas } = body.stream;
  return {
    required: true,
    description,
    content: Object.fromEntries(
      mediaTypes.map((mediaType) => {
        const declared = schemas?.[mediaType];
        return [mediaType, { schema: declared ? components.convert(declared, 'input') : mediaTypeSchema(mediaType) }];
      }),
    ),
  };
}

function routeResponses(components: SchemaComponents, definition: RouteDefinition): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(definition.responses).map(([status, spec]) => {
      const mediaType = spec.schema ? JSON_MEDIA_TYPE : spec.contentType;
      const schema = spec.schema ? components.convert(spec.schema, 'output') : mediaType && mediaType !== JSON_MEDIA_TYPE ? mediaTypeSchema(mediaType) : undefined;
      return [status, { description: spec.description, ...(mediaType ? { content: { [mediaType]: schema ? { schema } : {} } } : {}) }];
    }),
  );
}

/**
 * Adds the generic answers to a route's own. Where the route declares the same status with another
 * body (the token endpoint's OAuth errors), either body is declared: the route's handler gives one,
 * the router the other.
 */
function withGenericResponses(own: Record<string, JsonSchema>, definition: RouteDefinition): Record<string, JsonSchema> {
  const responses = { ...own };
  for (const name of genericResponsesOf(definition)) {
    const { status, response } = GENERIC_RESPONSES[name];
    const declared = responses[status];
    const declaredSchema = (declared?.content as Record<string, { schema?: JsonSchema }> | undefined)?.[JSON_MEDIA_TYPE]?.schema;
    if (!declared) responses[status] = { $ref: `${COMPONENT_RESPONSES}${name}` };
    else if (declaredSchema && JSON.stringify(declaredSchema) !== JSON.stringify(ERROR_REF) && 'content' in response) {
      responses[status] = { ...declared, content: { [JSON_MEDIA_TYPE]: { schema: { anyOf: [declaredSchema, ERROR_REF] } } } };
    }
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

function operationId(definition: RouteDefinition): string {
  const path = definition.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_m, next: string | undefined) => (next ?? '').toUpperCase());
  return `${definition.method.toLowerCase()}${path}`;
}

/**
 * The OpenAPI 3.1 document of every route, generated from the zod schemas the router validates
 * with: each operation's parameters, request body (JSON, forms, multipart or raw bytes) and every
 * answer it can give, its own and the router's. Path parameters without a schema are strings.
 */
export function buildOpenApiDocument(routes: readonly RouteDefinition[], basePath: string): JsonSchema {
  const components = new SchemaComponents();
  components.convert(apiErrorBody, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const definition of routes) {
    if (definition.hidden) continue;
    const declared = objectParameters(components, definition.params, 'path');
    const names = [...definition.path.matchAll(/\{([^}]+)\}/g)].map((found) => found[1]!);
    const pathParameters = names.map(
      (name) => declared.find((parameter) => parameter.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } },
    );
    const operation: Record<string, unknown> = {
      operationId: operationId(definition),
      summary: definition.summary,
      tags: [definition.tag],
      parameters: [...pathParameters, ...objectParameters(components, definition.query, 'query')],
      ...(definition.body ? { requestBody: requestBody(components, definition.body) } : {}),
      responses: withGenericResponses(routeResponses(components, definition), definition),
      ...(definition.public ? { security: [] } : {}),
    };
    const path = `${basePath}${definition.path}`;
    paths[path] = { ...paths[path], [definition.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Runloom',
      version: '1.0.0',
      description: 'Stores and runs AI workflows (runnables) and hosts AI workspaces.',
    },
    components: {
      schemas: Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses: Object.fromEntries(Object.entries(GENERIC_RESPONSES).map(([name, { response }]) => [name, response])),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
