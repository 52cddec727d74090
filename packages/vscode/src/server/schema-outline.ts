import { z } from 'zod';

/**
 * What the editor needs to know of a zod schema at one place of a document: which keys an object
 * there takes, which values a field takes, and its documentation. Read from the same schemas the
 * server validates with, so completion and hover never disagree with the HTTP API's 400s.
 */

/** A key an object accepts, with its documentation. */
export interface SchemaKey {
  name: string;
  description: string | undefined;
  required: boolean;
}

type Segment = string | number;

/** The schemas that may describe the value at `path` under `root` (several where a union is open). */
export function schemasAt(root: z.ZodType, path: readonly Segment[]): z.ZodType[] {
  let current = expand(root);
  for (const segment of path) {
    current = current.flatMap((schema) => expand(childOf(schema, segment)));
    if (current.length === 0) return [];
  }
  return current;
}

/** The keys an object at `path` accepts (the union of every candidate schema's keys), sorted. */
export function keysAt(root: z.ZodType, path: readonly Segment[]): SchemaKey[] {
  const keys = new Map<string, SchemaKey>();
  for (const schema of schemasAt(root, path)) {
    if (!(schema instanceof z.ZodObject)) continue;
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      if (keys.has(name)) continue;
      keys.set(name, { name, description: descriptionOf(field), required: !isOptional(field) });
    }
  }
  return [...keys.values()].sort((left, right) => left.name.localeCompare(right.name));
}

/** The literal values the field at `path` takes (enums, literals, booleans), in schema order. */
export function valuesAt(root: z.ZodType, path: readonly Segment[]): string[] {
  const values = new Set<string>();
  for (const schema of schemasAt(root, path)) {
    if (schema instanceof z.ZodEnum) for (const option of schema.options) values.add(String(option));
    else if (schema instanceof z.ZodLiteral) for (const value of schema.values) values.add(String(value));
    else if (schema instanceof z.ZodBoolean) values.add('true').add('false');
  }
  return [...values];
}

/** The documentation of the field at `path`: the first candidate schema that has any. */
export function descriptionAt(root: z.ZodType, path: readonly Segment[]): string | undefined {
  if (path.length === 0) return descriptionOf(root);
  const parents = schemasAt(root, path.slice(0, -1));
  const last = path[path.length - 1]!;
  for (const parent of parents) {
    const child = childOf(parent, last);
    const description = child && descriptionOf(child);
    if (description) return description;
  }
  return undefined;
}

/** Documentation of a schema or of the schema it wraps (`.describe()` on an optional field's inner type counts). */
function descriptionOf(schema: z.ZodType): string | undefined {
  for (let current: z.ZodType | undefined = schema; current; current = wrappedBy(current)) {
    if (current.description) return current.description;
  }
  return undefined;
}

function isOptional(schema: z.ZodType): boolean {
  return schema instanceof z.ZodOptional || schema instanceof z.ZodDefault || schema.safeParse(undefined).success;
}

/** The schema a wrapper (optional, nullable, default, pipe, readonly, lazy, catch) stands for. */
function wrappedBy(schema: z.ZodType): z.ZodType | undefined {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return schema.unwrap() as z.ZodType;
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodReadonly || schema instanceof z.ZodCatch || schema instanceof z.ZodNonOptional) {
    return schema.def.innerType as z.ZodType;
  }
  if (schema instanceof z.ZodPipe) return schema.def.in as z.ZodType;
  if (schema instanceof z.ZodLazy) return schema.def.getter() as z.ZodType;
  return undefined;
}

/** The concrete schemas `schema` stands for: wrappers removed, unions spread. */
function expand(schema: z.ZodType | undefined): z.ZodType[] {
  if (!schema) return [];
  const inner = wrappedBy(schema);
  if (inner) return expand(inner);
  if (schema instanceof z.ZodUnion) return (schema.options as z.ZodType[]).flatMap(expand);
  if (schema instanceof z.ZodIntersection) return [...expand(schema.def.left as z.ZodType), ...expand(schema.def.right as z.ZodType)];
  return [schema];
}

function childOf(schema: z.ZodType, segment: Segment): z.ZodType | undefined {
  if (schema instanceof z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    if (typeof segment === 'string' && segment in shape) return shape[segment];
    const catchall = schema.def.catchall as z.ZodType | undefined;
    return catchall && !(catchall instanceof z.ZodNever) && !(catchall instanceof z.ZodUnknown) ? catchall : undefined;
  }
  if (schema instanceof z.ZodArray) return typeof segment === 'number' ? (schema.element as z.ZodType) : undefined;
  if (schema instanceof z.ZodRecord) return schema.valueType as z.ZodType;
  if (schema instanceof z.ZodTuple) return typeof segment === 'number' ? (schema.def.items[segment] as z.ZodType | undefined) : undefined;
  return undefined;
}
