import fc from 'fast-check';
import type { JsonSchema } from './json-schema-sample';

export interface SchemaArbitraryOptions {
  /** The schema a `$ref` names (`#/components/schemas/Run`). */
  resolve(ref: string): JsonSchema | undefined;
  /** Existing values for a property of this name (`gold_label_id`, `resource`), so values reach past lookups. */
  knownValues?(property: string): readonly string[] | undefined;
  /** URLs to use for `format: uri` (a local receiver: generated URLs must not reach the internet). */
  urls?: readonly string[];
}

/** Past this depth, schemas that allow anything get scalars only, and arrays and objects stay small. */
const MAX_DEPTH = 4;

/**
 * A fast-check arbitrary of values that match `schema` (JSON Schema draft 2020-12, as the OpenAPI
 * document carries it): `$ref`s into the document, const, enum, anyOf/oneOf/allOf, type lists,
 * objects (required and optional properties, additionalProperties), arrays, string lengths,
 * patterns and formats (uuid, date-time, uri, email), numeric bounds. Values shrink toward the
 * smallest that still fails, as fast-check does.
 */
export function arbitraryFor(schema: JsonSchema | undefined, options: SchemaArbitraryOptions, depth = 0, property?: string): fc.Arbitrary<unknown> {
  const generated = fromSchema(schema, options, depth);
  const known = property === undefined ? undefined : options.knownValues?.(property);
  return known && known.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 4 }, { arbitrary: generated, weight: 1 }) : generated;
}

function fromSchema(schema: JsonSchema | undefined, options: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  if (!schema || Object.keys(schema).length === 0 || (Object.keys(schema).length === 1 && 'description' in schema)) return anyJson(depth);
  if (typeof schema.$ref === 'string') {
    const target = options.resolve(schema.$ref);
    if (!target) throw new Error(`unresolvable $ref ${schema.$ref}`);
    return fromSchema(target, options, depth);
  }
  if ('const' in schema) return fc.constant(schema.const);
  // The document's own examples are valid values that random ones rarely hit (a configuration that parses).
  if (Array.isArray(schema.examples) && schema.examples.length > 0) {
    return fc.oneof({ arbitrary: fc.constantFrom(...(schema.examples as unknown[])), weight: 1 }, { arbitrary: fromSchema(withoutKeys(schema, ['examples']), options, depth), weight: 1 });
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(branches)) return fc.oneof(...branches.map((branch) => fromSchema({ ...withoutKeys(schema, ['anyOf', 'oneOf']), ...branch }, options, depth)));
  if (Array.isArray(schema.allOf)) return fromSchema(Object.assign(withoutKeys(schema, ['allOf']), ...(schema.allOf as JsonSchema[])), options, depth);
  if (Array.isArray(schema.type)) return fc.oneof(...(schema.type as string[]).map((type) => fromSchema({ ...schema, type }, options, depth)));
  switch (schema.type ?? (schema.properties ? 'object' : undefined)) {
    case 'object':
      return objectOf(schema, options, depth);
    case 'array': {
      const minLength = (schema.minItems as number | undefined) ?? 0;
      const maxLength = Math.min((schema.maxItems as number | undefined) ?? 3, minLength + (depth >= MAX_DEPTH ? 0 : 3));
      return fc.array(fromSchema(schema.items as JsonSchema | undefined, options, depth + 1), { minLength, maxLength });
    }
    case 'string':
      return stringOf(schema, options);
    case 'integer':
      return fc.integer({ min: Math.max((schema.minimum as number | undefined) ?? -1e6, -1e9), max: Math.min((schema.maximum as number | undefined) ?? 1e6, 1e9) });
    case 'number':
      return fc.double({
        min: (schema.minimum as number | undefined) ?? -1e6,
        max: (schema.maximum as number | undefined) ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return anyJson(depth);
  }
}

function withoutKeys(schema: JsonSchema, keys: string[]): JsonSchema {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !keys.includes(key)));
}

function objectOf(schema: JsonSchema, options: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const model = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, arbitraryFor(property, options, depth + 1, name)]));
  const declared = fc.record(model, { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) });
  const additional = schema.additionalProperties;
  if (!additional || typeof additional !== 'object' || depth >= MAX_DEPTH) return declared;
  const keys = schema.propertyNames ? (stringOf({ minLength: 1, ...(schema.propertyNames as JsonSchema) }, options) as fc.Arbitrary<string>) : fc.string({ minLength: 1, maxLength: 8 });
  const extra = fc.dictionary(keys, fromSchema(additional as JsonSchema, options, depth + 1), { maxKeys: 3, noNullPrototype: true });
  return fc.tuple(extra, declared).map(([more, known]) => ({ ...more, ...(known as object) }));
}

function stringOf(schema: JsonSchema, options: SchemaArbitraryOptions): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = Math.min((schema.maxLength as number | undefined) ?? 40, minLength + 40);
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
    case 'uri':
    case 'url':
      return options.urls && options.urls.length > 0 ? fc.constantFrom(...options.urls) : fc.constant('http://127.0.0.1:9/');
    case 'email':
      return fc.emailAddress();
    case 'binary':
      return fc.string();
  }
  if (typeof schema.pattern === 'string') {
    return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter((text) => text.length >= minLength && text.length <= ((schema.maxLength as number | undefined) ?? Infinity));
  }
  return fc.oneof(
    { arbitrary: fc.string({ minLength, maxLength }), weight: 4 },
    { arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme' }), weight: 1 },
  );
}

/** Any small JSON value, for schemas that allow anything. */
function anyJson(depth: number): fc.Arbitrary<unknown> {
  return depth >= MAX_DEPTH ? fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null)) : fc.jsonValue({ maxDepth: 2 });
}
