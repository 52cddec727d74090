import { z } from 'zod';

/** The body of every v1 error the router writes from an `ApiError` (DESIGN 2.3), for OpenAPI responses. */
export const apiErrorBody = z.object({
  error: z.string(),
  code: z.string().optional(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
