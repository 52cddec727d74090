import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';

/**
 * The core's bundle is built without keepNames (esbuild.mjs), so a class that refers to itself is
 * `_Name` there. The errors it exports, which a host may print, name their class themselves: checked on what
 * `npm run build` wrote (npm test builds first).
 */
const CORE_INDEX = path.resolve(__dirname, '../packages/core/dist/index.js');

describe('class names in the core bundle', () => {
  it('DomainError and ApiError, the errors it exports, print under their own names', () => {
    if (!existsSync(CORE_INDEX)) throw new Error("packages/core/dist is missing: run 'npm run build' first");
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the built bundle, not the sources
    const core = require(CORE_INDEX) as typeof import('../packages/core/src/index');
    for (const error of [core.DomainError.notFound('run r1'), core.ApiError.notFound('run r1')]) {
      assert.equal(error.constructor.name, error.name);
      assert.match(inspect(error), new RegExp(`^${error.name}: run r1 not found\\n`));
    }
  });
});
