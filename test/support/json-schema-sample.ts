import type { SeededRandom } from './seeded-random';

/** A JSON Schema (draft 2020-12, as the OpenAPI document carries it). */
export type JsonSchema = Record<string, any>;

/** Strings a sampled `string` with a `pattern` is tried against, in order, before a random word. */
const PATTERN_CANDIDATES = ['x-sample', 'sample', 'Sample1', 'a', '1', 'sample_1', 'sample-1'];

export interface SampleOptions {
  /** An existing id for a string property of this name (`gold_label_id`), so samples reach past lookups. */
  idFor?: (property: string) => string | undefined;
}

/**
 * A value that matches `schema`, or comes close: enums, consts, types, required and optional
 * properties, lengths and bounds, `anyOf`/`oneOf` branches and the uuid, uri and date-time formats.
 * Patterns are matched from a few candidates only: a generated body is a seed to mutate, not an oracle.
 */
export function sampleFromSchema(schema: JsonSchema | undefined, random: SeededRandom, options: SampleOptions = {}, depth = 0): unknown {
  if (!schema || Object.keys(schema).length === 0) return anyValue(random, depth);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return random.pick(schema.enum);
  if ('default' in schema && random.chance(0.2)) return schema.default;
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) return sampleFromSchema(random.pick(branches as JsonSchema[]), random, options, depth);
  if (Array.isArray(schema.allOf)) return sampleFromSchema(Object.assign({}, ...(schema.allOf as JsonSchema[])), random, options, depth);
  const type: string | undefined = Array.isArray(schema.type) ? random.pick(schema.type as string[]) : schema.type;
  switch (type ?? (schema.properties ? 'object' : undefined)) {
    case 'object':
      return sampleObject(schema, random, options, depth);
    case 'array': {
      const min: number = schema.minItems ?? 0;
      const max = Math.min(schema.maxItems ?? 3, min + 3);
      return Array.from({ length: random.int(min, max) }, () => sampleFromSchema(schema.items, random, options, depth + 1));
    }
    case 'string':
      return sampleString(schema, random);
    case 'integer':
    case 'number': {
      const min = Math.max(schema.minimum ?? -1000, -1000);
      const max = Math.min(schema.maximum ?? 1000, Math.max(min, 1000));
      const value = random.int(Math.ceil(min), Math.floor(max));
      return type === 'number' && random.chance(0.3) ? value + 0.5 : value;
    }
    case 'boolean':
      return random.chance(0.5);
    case 'null':
      return null;
    default:
      return anyValue(random, depth);
  }
}

function sampleObject(schema: JsonSchema, random: SeededRandom, options: SampleOptions, depth: number): Record<string, unknown> {
  const required = new Set<string>(schema.required ?? []);
  const result: Record<string, unknown> = {};
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    if (!required.has(name) && !random.chance(0.6)) continue;
    const id = options.idFor?.(name);
    result[name] = id !== undefined && random.chance(0.8) ? id : sampleFromSchema(property, random, options, depth + 1);
  }
  const additional = schema.additionalProperties;
  if (additional && typeof additional === 'object' && depth < 3) {
    const count = random.int(0, 2);
    for (let index = 0; index < count; index++) {
      const key = sampleString({ ...(schema.propertyNames ?? {}), minLength: 1 }, random);
      result[key] = sampleFromSchema(additional as JsonSchema, random, options, depth + 1);
    }
  }
  return result;
}

function sampleString(schema: JsonSchema, random: SeededRandom): string {
  const minLength: number = schema.minLength ?? 0;
  const maxLength: number = schema.maxLength ?? 24;
  switch (schema.format) {
    case 'uuid':
      return random.uuid(7);
    case 'uri':
    case 'url':
      return `https://example.com/${random.word(6)}`;
    case 'date-time':
      return new Date(Date.UTC(2024, 0, 1) + random.int(0, 1e9) * 1000).toISOString();
    case 'email':
      return `${random.word(6)}@example.com`;
  }
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    const fitting = PATTERN_CANDIDATES.find((candidate) => pattern.test(candidate));
    if (fitting) return fitting;
  }
  const length = random.int(Math.max(minLength, 1), Math.max(Math.min(maxLength, minLength + 12), 1));
  return random.word(length);
}

/** A small JSON value of any type, for schemas that allow anything. */
function anyValue(random: SeededRandom, depth: number): unknown {
  const kinds = depth > 2 ? ['string', 'number', 'boolean', 'null'] : ['string', 'number', 'boolean', 'null', 'array', 'object'];
  switch (random.pick(kinds)) {
    case 'string':
      return random.word(random.int(1, 10));
    case 'number':
      return random.int(-100, 100);
    case 'boolean':
      return random.chance(0.5);
    case 'array':
      return [anyValue(random, depth + 1), anyValue(random, depth + 1)];
    case 'object':
      return { [random.word(4)]: anyValue(random, depth + 1) };
    default:
      return null;
  }
}

/** Values a field of the wrong type or at a boundary gets: each names what it probes. */
export const HOSTILE_VALUES: ReadonlyArray<readonly [string, unknown]> = [
  ['null', null],
  ['true', true],
  ['zero', 0],
  ['negative', -1],
  ['fraction', 1.5],
  ['huge number', 1e308],
  ['unsafe integer', 2 ** 53 + 1],
  ['empty string', ''],
  ['blank string', '   '],
  ['numeric string', '42'],
  ['NUL character', 'a\u0000b'],
  ['lone surrogate', '\ud800'],
  ['right-to-left override', 'abc\u202edef'],
  ['emoji', '💩🚀'],
  ['CRLF injection', 'a\r\nX-Injected: 1'],
  ['path traversal', '../../etc/passwd'],
  ['URL with credentials', 'http://user:pass@127.0.0.1:1/'],
  ['file URL', 'file:///etc/passwd'],
  ['broken URL', 'http://[::1'],
  ['empty array', []],
  ['array of nulls', [null, null]],
  ['empty object', {}],
  ['object for a scalar', { nested: { deeper: 1 } }],
  ['array for a scalar', ['a', 1, true]],
  ['prototype key object', JSON.parse('{"__proto__":{"polluted":true}}')],
  ['constructor key object', { constructor: { prototype: { polluted: true } } }],
  ['long string', 'x'.repeat(70_000)],
];

/** Keys a mutation adds next to the known ones: prototype-pollution keys and plain extras. */
export const HOSTILE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'extra_field', '', '\u0000'];

interface Slot {
  parent: Record<string, unknown> | unknown[];
  key: string | number;
}

/** Every place in `value` a mutation can touch: each property and array element, at any depth. */
function slotsOf(value: unknown, found: Slot[] = [], depth = 0): Slot[] {
  if (depth > 8 || value === null || typeof value !== 'object') return found;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      found.push({ parent: value, key: index });
      slotsOf(item, found, depth + 1);
    });
    return found;
  }
  for (const [key, item] of Object.entries(value)) {
    found.push({ parent: value as Record<string, unknown>, key });
    slotsOf(item, found, depth + 1);
  }
  return found;
}

/** Containers in `value` (the value itself included) a key can be added to. */
function objectsOf(value: unknown): Record<string, unknown>[] {
  const objects: Record<string, unknown>[] = [];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) objects.push(value as Record<string, unknown>);
  for (const slot of slotsOf(value)) {
    const item = Array.isArray(slot.parent) ? slot.parent[slot.key as number] : slot.parent[slot.key as string];
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) objects.push(item as Record<string, unknown>);
  }
  return objects;
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // `__proto__` must become an own property, as JSON.parse makes it, not a prototype change.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * A copy of `seed` with 1–3 mutations: a field replaced by a hostile value, a field removed, or
 * a hostile key added. Answers the copy and a label naming the mutations, to reproduce a failure.
 */
export function mutate(seed: unknown, random: SeededRandom): { value: unknown; label: string } {
  const value: unknown = seed === undefined ? {} : structuredClone(seed);
  const labels: string[] = [];
  const count = random.int(1, 3);
  for (let round = 0; round < count; round++) {
    const slots = slotsOf(value);
    const operation = slots.length === 0 ? 'add' : random.pick(['replace', 'replace', 'remove', 'add']);
    if (operation === 'add') {
      const objects = objectsOf(value);
      if (objects.length === 0) continue;
      const target = random.pick(objects);
      const key = random.pick(HOSTILE_KEYS);
      const [name, hostile] = random.pick(HOSTILE_VALUES);
      defineOwn(target, key, structuredClone(hostile));
      labels.push(`add ${JSON.stringify(key)}=${name}`);
      continue;
    }
    const slot = random.pick(slots);
    if (operation === 'remove') {
      if (Array.isArray(slot.parent)) slot.parent.splice(slot.key as number, 1);
      else delete slot.parent[slot.key as string];
      labels.push(`remove ${String(slot.key)}`);
      continue;
    }
    const [name, hostile] = random.pick(HOSTILE_VALUES);
    if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = structuredClone(hostile);
    else defineOwn(slot.parent, slot.key as string, structuredClone(hostile));
    labels.push(`${String(slot.key)}=${name}`);
  }
  return { value, label: labels.join(', ') || 'unchanged' };
}
