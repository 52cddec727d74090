import * as z from 'zod';
import { ErrorCodes, type ErrorCode } from './api-error';
import { lazySchema } from '../domain/lazy-schema';

/** One problem of a refused input: where it is and what to fix (docs/api.md#conventions). */
export const errorDetailSchema = lazySchema(() =>
  z
    .object({
      path: z.string().describe("dot path of the field ('llms.0.model'); '' for the whole input"),
      message: z.string(),
      line: z.int().optional().describe('1-based line in a configuration text, when the problem can be located'),
      column: z.int().optional().describe('1-based column in a configuration text, with line'),
    })
    .meta({ id: 'ErrorDetail' }),
);

/** The body of every v1 error the router writes from a `DomainError` or an `ApiError`, for OpenAPI responses. */
export const apiErrorBody = lazySchema(() =>
  z
    .object({
      error: z.string().describe('what went wrong, for people'),
      code: z.enum(Object.keys(ErrorCodes) as [ErrorCode, ...ErrorCode[]]).optional().describe('what went wrong, for programs'),
      details: z.array(errorDetailSchema).optional().describe('each invalid field, for validation failures'),
    })
    .meta({ id: 'Error' }),
);
