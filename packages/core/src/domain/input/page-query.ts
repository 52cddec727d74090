import * as z from 'zod';
import { lazy } from '../lazy';
import { lazySchema } from '../lazy-schema';

/**
 * A numeric query parameter: plain decimal digits only. `0x10`, `1e2`, `1.5`, `-1`, ` 1` and `+1`
 * are refused (400) rather than read as some number the client may not have meant.
 */
export function decimalQueryInteger(name: string, bounds: { min: number; max?: number }) {
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  return z
    .string()
    .regex(/^[0-9]+$/, `${name} must be a plain decimal integer such as 50: digits only, no sign, spaces, fraction, exponent or hex`)
    .transform(Number)
    .pipe(z.number().min(bounds.min, `${name} must be at least ${bounds.min}`).max(max, `${name} must be at most ${max}`))
    .meta({ type: 'integer', minimum: bounds.min, ...(bounds.max === undefined ? {} : { maximum: bounds.max }) });
}

/**
 * A list's `limit` (default 50, at most 500) and `offset`, as query fields to spread into a
 * route's query schema (docs/api.md, "Lists"), made on first use as the schemas spreading them
 * are. The runnable list is the exception (unbounded unless `limit`).
 */
export const pageQueryFields = lazy(() => ({
  limit: decimalQueryInteger('limit', { min: 1, max: 500 }).default(50),
  offset: decimalQueryInteger('offset', { min: 0 }).default(0),
}));

/** The same page as numbers, for services that library callers (not the router) call with a page. */
export const pageFields = lazy(() => ({
  limit: z.number().int('limit must be an integer').min(1, 'limit must be at least 1').max(500, 'limit must be at most 500').default(50),
  offset: z.number().int('offset must be an integer').min(0, 'offset must be at least 0').default(0),
}));

/** A query of nothing but `limit` and `offset`. */
export const pageQuery = lazySchema(() => z.object(pageQueryFields()));
