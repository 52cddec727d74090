import { Router, type RouteDefinition } from '../../packages/core/src/index';
import type { JsonSchema } from './json-schema-sample';
import { inlineSchemaRefs, type OpenApiDocument } from './openapi-document';
import type { TestRunloom } from './harness';

/** A parameter of an OpenAPI operation. */
export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

/** The parts of an OpenAPI operation that generated requests read. */
export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

/** A registered route with its OpenAPI operation (absent for hidden routes). */
export interface CatalogRoute {
  definition: RouteDefinition;
  /** `METHOD /path/{param}`, as the router names it. */
  key: string;
  operation?: OpenApiOperation;
  pathParams: string[];
}

/**
 * Every route the router serves when this is called, read from the container (not from a list in
 * the test), with its operation in the served `GET /v1/openapi.json`, so routes other features
 * add later are covered without editing the tests.
 */
export async function routeCatalog(t: TestRunloom): Promise<{ routes: CatalogRoute[]; document: Record<string, any> }> {
  const basePath = t.runloom.config.basePath;
  const response = await t.request('/v1/openapi.json');
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  const document = (await response.json()) as OpenApiDocument;
  // Schemas named in components are inlined: the tests read each operation's schemas as plain objects.
  const operationOf = (path: string, method: string): OpenApiOperation | undefined => {
    const operation = document.paths[path]?.[method];
    return operation && (inlineSchemaRefs(document, operation) as unknown as OpenApiOperation);
  };
  const routes = t.runloom.container.get(Router).routes.map((definition) => ({
    definition,
    key: `${definition.method} ${definition.path}`,
    operation: operationOf(`${basePath}${definition.path}`, definition.method.toLowerCase()),
    pathParams: [...definition.path.matchAll(/\{([^}]+)\}/g)].map((found) => found[1]!),
  }));
  return { routes, document };
}

/**
 * Names a client chooses rather than ids of stored records: a process (the name its runs share),
 * a phase or task of a process run's spec, and a thread (its file name within the workspace).
 */
const CLIENT_NAMES = new Set(['processId', 'phaseId', 'taskId', 'threadId']);

/** Parameters that name a stored record by id: `id`, `*_id` and (on workspace routes) `*Id`. */
export function isIdParam(name: string): boolean {
  return !CLIENT_NAMES.has(name) && (name === 'id' || name.endsWith('_id') || /[a-z]Id$/.test(name));
}

/**
 * The kind of record an id parameter names: `{run_id}`, `{gold_label_id}` and `{workspaceId}` by
 * their name (snake_case), `{id}` by the path segment before it (`/v1/runnable/{id}/runs` names a
 * runnable).
 */
export function recordKindOf(path: string, param: string): string {
  // `{runId}` of a process run route names a process run, not a v1 run.
  if (param === 'runId' && path.includes('/processes/runs/')) return 'process_run';
  // …and of a command's execution route, a command execution.
  if (param === 'runId' && path.includes('/executions/')) return 'command_execution';
  if (param !== 'id') {
    return param
      .replace(/_id$|Id$/, '')
      .replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
      .replace(/-/g, '_');
  }
  const segments = path.split('/');
  const index = segments.indexOf(`{${param}}`);
  return (segments[index - 1] ?? 'record').replace(/-/g, '_');
}

/** The route's path with each `{param}` replaced by its (already URL-encoded) value. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return value;
  });
}

/**
 * A required `path` query names this file, which every account's fixture workspace holds
 * (account-records.ts): a PDF, so the file, PDF and download routes all read it.
 */
export const SAMPLE_FILE_PATH = 'sample.pdf';

/**
 * The route's required query parameters (`?path=` of the workspace file routes) with fixed plain
 * values (`sample-<name>`, an enum's first value, 1 for integers) as a query string, '' when it has
 * none: what a generated request adds to get past query validation to what it tests.
 */
export function requiredQueryOf(route: CatalogRoute): string {
  const required = (route.operation?.parameters ?? []).filter((parameter) => parameter.in === 'query' && parameter.required);
  const values = required.map((parameter) => {
    const schema = parameter.schema;
    if (parameter.name === 'path') return [parameter.name, SAMPLE_FILE_PATH];
    return [parameter.name, String(Array.isArray(schema?.enum) ? schema.enum[0] : schema?.type === 'integer' ? 1 : `sample-${parameter.name}`)];
  });
  return values.length > 0 ? `?${new URLSearchParams(values)}` : '';
}

/** The JSON schema of the route's request body, when it takes JSON. */
export function jsonBodySchema(route: CatalogRoute): JsonSchema | undefined {
  return route.operation?.requestBody?.content['application/json']?.schema;
}

/** Whether the route documents a JSON error body whose `error` is an object (the provider NOT_FOUND of docs/api.md#conventions). */
export function documentsObjectError(route: CatalogRoute, status: number): boolean {
  const schema = route.operation?.responses[String(status)]?.content?.['application/json']?.schema;
  // The route's own body may be declared beside the router's error envelope (anyOf).
  return [schema, ...((schema?.anyOf as JsonSchema[] | undefined) ?? [])].some((candidate) => candidate?.properties?.error?.type === 'object');
}
