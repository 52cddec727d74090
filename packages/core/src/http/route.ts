import type * as z from 'zod';
import type { Principal } from '../domain/auth/principal';
import type { HttpResult } from './http-result';

export type { Principal };

/** The methods a route may declare; HEAD is answered on every GET route by the router. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omit for bodies that are not JSON. */
  schema?: z.ZodType;
  /**
   * Media type of a non-JSON body (a file, an event stream, text), or a media range such as
   * `text/*` (a route that serves stored content of any type declares the any-type range). The
   * document declares text as a string and anything else as binary.
   */
  contentType?: string;
}

/**
 * How the request body is read:
 * - a zod schema: a JSON body (also form-encoded when `form` is set), parsed within the JSON
 *   limit and validated;
 * - `{ stream: … }`: the handler reads the body itself, `body` (a web stream, or null; no web
 *   `Request` is built for it) or `request.body` (uploads, the token endpoint); the router only
 *   checks the media type against `mediaTypes`. `schemas` documents the body of a
 *   media type that has fields (JSON, a form, multipart); any other is declared as raw bytes.
 */
export type BodySpec<B = unknown> =
  | { json: z.ZodType<B>; form?: boolean; optional?: boolean }
  | { stream: { mediaTypes: string[]; description: string; schemas?: Record<string, z.ZodType> } };

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Undefined only on public routes. */
  principal: Principal;
  request: Request;
  /** A request header by lower-case name (as `request.headers.get`), without building the web `Request`. */
  header(name: string): string | null;
  /** `request.signal` without building the web `Request`: aborts when the client goes away. */
  signal: AbortSignal;
  requestId: string;
  /** The peer's IP address, as the server adapter (or the host) gave it; see `ConnectionInfo`. */
  remoteAddress: string | undefined;
}

/**
 * One HTTP route, declared in a feature's route table. The router validates `params`, `query` and
 * `body` with the zod schemas before calling `handle`, and the OpenAPI document is generated from
 * the same schemas, so the two never disagree.
 */
export interface RouteDefinition<P = any, Q = any, B = any> {
  method: HttpMethod;
  /** OpenAPI-style template, e.g. `/v1/runnable/{id}`. */
  path: string;
  /** Public routes need no bearer token. */
  public?: boolean;
  summary: string;
  tag: string;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: BodySpec<B>;
  responses: Record<number, ResponseSpec>;
  /** Hidden routes (debug) stay out of the OpenAPI document. */
  hidden?: boolean;
  handle(input: RouteInput<P, Q, B>): Promise<HttpResult>;
}

/** Keeps each route's handler typed by its own schemas. */
export function route<P = undefined, Q = undefined, B = undefined>(
  definition: RouteDefinition<P, Q, B>,
): RouteDefinition<P, Q, B> {
  return definition;
}

/** Multi-bound: each feature module binds its table with `bind(RouteTable).toConstantValue(…)`. */
export const RouteTable = Symbol.for('runloom.RouteTable');
export type RouteTable = readonly RouteDefinition[];

/**
 * Authenticates bearer tokens for the router; the auth feature binds it. Throws a `DomainError`
 * (UNAUTHORIZED) for a missing, malformed, forged or expired token.
 */
export const Authenticator = Symbol.for('runloom.Authenticator');
export interface Authenticator {
  authenticate(authorization: string | null): Promise<Principal>;
}
