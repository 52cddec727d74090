import assert from 'node:assert/strict';
import type { TestRunloom } from './harness';

/** JSON requests to a test instance and their expected answers, for tests that make many of them. */
export interface JsonCalls {
  /** `method path` with `body` as JSON (none when undefined), as `account` (the harness's default when undefined). */
  send(path: string, method: string, body?: unknown, account?: string): Promise<Response>;
  /** The answer's JSON body, once its status is `status` (else fails showing the body). */
  answer<T>(response: Promise<Response>, status: number): Promise<T>;
}

/** `app` is read at each call: tests start their instance in a `before` hook. */
export function jsonCalls(app: () => TestRunloom): JsonCalls {
  return {
    send: (path, method, body, account) =>
      app().request(path, {
        method,
        account,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      }),
    async answer<T>(response: Promise<Response>, status: number): Promise<T> {
      const got = await response;
      const text = await got.text();
      assert.equal(got.status, status, text);
      return JSON.parse(text) as T;
    },
  };
}
