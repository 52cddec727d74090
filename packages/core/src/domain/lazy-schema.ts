import * as z from 'zod';

/**
 * The schema `make()` returns, made on its first use (a parse, or the OpenAPI document) rather than
 * when its module loads: zod builds every object of a schema's tree at once, and the module-level
 * schemas of the routes and records, most of which a listening server has not used yet, were ~7%
 * of `runloom serve`'s start CPU. `z.lazy` parses, fails and converts to JSON Schema as the
 * schema it makes does; what it lacks is the made schema's own methods (an object's `shape`,
 * `extend`), so a schema other schemas are built from stays a plain one.
 */
export function lazySchema<T extends z.ZodType>(make: () => T): z.ZodLazy<T> {
  return z.lazy(make);
}
