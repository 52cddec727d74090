import { z } from 'zod';

/**
 * DESIGN 2.3: a list's `limit` (default 50, at most 500) and `offset`, as query fields to spread
 * into a route's query schema. The runnable list is the exception (unbounded unless `limit`).
 */
export const pageQueryFields = {
  limit: z.coerce.number().int('limit must be an integer').min(1, 'limit must be at least 1').max(500, 'limit must be at most 500').default(50),
  offset: z.coerce.number().int('offset must be an integer').min(0, 'offset must be at least 0').default(0),
};

/** A query of nothing but `limit` and `offset`. */
export const pageQuery = z.object(pageQueryFields);
