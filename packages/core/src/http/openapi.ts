import { z } from 'zod';
import { apiErrorBody } from './error-schema';
import type { RouteDefinition } from './route';

type JsonSchema = Record<string, unknown>;

/** Converts a zod schema to the JSON Schema dialect of OpenAPI 3.1 (draft 2020-12). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
}

function unauthorizedResponse(): JsonSchema {
  return { description: 'missing, invalid or expired bearer token', content: { 'application/json': { schema: jsonSchema(apiErrorBody, 'output') } } };
}

function objectParameters(schema: z.ZodType | undefined, location: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const converted = jsonSchema(schema, 'input');
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

/**
 * The OpenAPI 3.1 document of every route, generated from the zod schemas the router validates
 * with. Path parameters without a schema are declared as strings.
 */
export function buildOpenApiDocument(routes: readonly RouteDefinition[], basePath: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const definition of routes) {
    if (definition.hidden) continue;
    const declared = objectParameters(definition.params, 'path');
    const names = [...definition.path.matchAll(/\{([^}]+)\}/g)].map((found) => found[1]!);
    const pathParameters = names.map(
      (name) => declared.find((parameter) => parameter.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' } },
    );
    const operation: Record<string, unknown> = {
      operationId: `${definition.method.toLowerCase()}${definition.path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+(.)?/g, (_m, next: string | undefined) => (next ?? '').toUpperCase())}`,
      summary: definition.summary,
      tags: [definition.tag],
      parameters: [...pathParameters, ...objectParameters(definition.query, 'query')],
      responses: Object.fromEntries(
        Object.entries(definition.responses).map(([status, spec]) => [
          status,
          {
            description: spec.description,
            ...(spec.schema
              ? { content: { 'application/json': { schema: jsonSchema(spec.schema, 'output') } } }
              : spec.contentType
                ? { content: { [spec.contentType]: {} } }
                : {}),
          },
        ]),
      ),
    };
    if (definition.public) operation.security = [];
    // The router answers 401 on every bearer route, whether or not its table says so.
    else (operation.responses as Record<string, unknown>)['401'] ??= unauthorizedResponse();
    if (definition.body) {
      if ('json' in definition.body) {
        const schema = jsonSchema(definition.body.json, 'input');
        operation.requestBody = {
          required: !definition.body.optional,
          content: {
            'application/json': { schema },
            ...(definition.body.form ? { 'application/x-www-form-urlencoded': { schema } } : {}),
          },
        };
      } else {
        operation.requestBody = {
          required: true,
          description: definition.body.stream.description,
          content: Object.fromEntries(definition.body.stream.mediaTypes.map((type) => [type, {}])),
        };
      }
    }
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
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
