import assert from 'node:assert/strict';
import * as z from 'zod';
import { lazySchema } from './lazy-schema';

const record = () => z.object({ name: z.string().min(1), size: z.int().default(0) }).meta({ id: 'Record' });

describe('lazySchema', () => {
  it('makes its schema on the first parse, not when declared or placed in other schemas', () => {
    let made = 0;
    const schema = lazySchema(() => (made++, record()));
    const holders = z.object({ one: schema, many: z.array(schema).optional() });
    assert.equal(made, 0);
    assert.deepEqual(holders.parse({ one: { name: 'a' } }), { one: { name: 'a', size: 0 } });
    assert.equal(made, 1);
  });

  it('parses, fails and converts to JSON Schema as z.lazy of the same schema does', () => {
    const standIn = lazySchema(record);
    const plain = z.lazy(record);
    for (const value of [{ name: 'a', size: 2 }, { name: '' }, { size: 'x' }, null]) {
      assert.deepEqual(standIn.safeParse(value), plain.safeParse(value), JSON.stringify(value));
    }
    for (const io of ['input', 'output'] as const) {
      const wrap = (schema: z.ZodType) => z.object({ one: schema, many: z.array(schema), maybe: schema.optional() });
      assert.deepEqual(z.toJSONSchema(wrap(lazySchema(record)), { io }), z.toJSONSchema(wrap(z.lazy(record)), { io }));
    }
  });

  it('is a ZodLazy that the schemas made from it hold, as their users do', () => {
    const schema = lazySchema(record);
    assert.ok(schema instanceof z.ZodLazy && schema instanceof z.ZodType);
    assert.equal(schema.optional().unwrap(), schema);
    assert.equal(schema.unwrap().meta()?.id, 'Record');
    assert.equal(schema.describe('a record').description, 'a record');
  });

  it('makes a schema that refers to itself', () => {
    interface Node {
      name: string;
      children: Node[];
    }
    const node: z.ZodType<Node> = lazySchema(() => z.object({ name: z.string(), children: z.array(node) }));
    const tree = { name: 'root', children: [{ name: 'leaf', children: [] }] };
    assert.deepEqual(node.parse(tree), tree);
    assert.equal(node.safeParse({ name: 'root', children: [{ name: 1, children: [] }] }).error?.issues[0]?.path.join('.'), 'children.0.name');
  });
});
