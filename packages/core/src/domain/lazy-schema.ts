import * as z from 'zod';

/** The `make` of a stand-in not yet constructed, kept on its target until its first touch. */
const pending = Symbol('lazySchema: not yet constructed');
type Target = { [pending]?: { make: () => z.ZodType; schema: object } };

/**
 * Runs zod's ZodLazy constructor on the stand-in, with the stand-in as its `this`, so zod's own
 * closures and registries see the stand-in as the schema (as the one object its users hold);
 * the properties it defines land on the target.
 */
function construct(target: Target): void {
  const state = target[pending];
  if (state === undefined) return;
  delete target[pending];
  Reflect.apply(z.ZodLazy, state.schema, [{ type: 'lazy', getter: state.make }]);
}

/** Every touch but reading the prototype constructs first, then does what the target would. */
const constructOnFirstTouch: ProxyHandler<Target> = {
  get: (target, key, receiver) => (construct(target), Reflect.get(target, key, receiver)),
  set: (target, key, value, receiver) => (construct(target), Reflect.set(target, key, value, receiver)),
  has: (target, key) => (construct(target), Reflect.has(target, key)),
  ownKeys: (target) => (construct(target), Reflect.ownKeys(target)),
  getOwnPropertyDescriptor: (target, key) => (construct(target), Reflect.getOwnPropertyDescriptor(target, key)),
  defineProperty: (target, key, descriptor) => (construct(target), Reflect.defineProperty(target, key, descriptor)),
  deleteProperty: (target, key) => (construct(target), Reflect.deleteProperty(target, key)),
};

/**
 * The schema `make()` returns, made on its first use (a parse, or the OpenAPI document) rather than
 * when its module loads: zod builds every object of a schema's tree at once, and the module-level
 * schemas of the routes and records, most of which a listening server has not used yet, were ~7%
 * of `runloom serve`'s start CPU. `z.lazy` parses, fails and converts to JSON Schema as the
 * schema it makes does; what it lacks is the made schema's own methods (an object's `shape`,
 * `extend`), so a schema other schemas are built from stays a plain one.
 *
 * The `z.lazy` itself is constructed on its first touch too (zod's constructor run on a stand-in
 * whose prototype is ZodLazy's): constructing the ~190 wrappers the modules and route tables
 * declare was ~2.5 ms of a start that touches none of them. The price is the Proxy's traps on
 * every touch after: ~0.15 µs more per parse through a stand-in.
 */
export function lazySchema<T extends z.ZodType>(make: () => T): z.ZodLazy<T> {
  const target: Target = Object.create(z.ZodLazy.prototype);
  const schema = new Proxy(target, constructOnFirstTouch);
  target[pending] = { make, schema };
  return schema as unknown as z.ZodLazy<T>;
}
