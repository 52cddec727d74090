import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleNodeRequest, type MountOptions, type WebHandler } from './translate';

/**
 * Express/Connect middleware answering every request that reaches it: mount it last, or under a
 * path (`app.use('/api', …)` with `basePath: '/api'`; the full original URL is routed). Mount it
 * before any body parser so uploads stream through; after one, the parsed `req.body` is re-encoded.
 */
export function runloomMiddleware(runloom: WebHandler, options: MountOptions = {}) {
  return (req: IncomingMessage & { body?: unknown; originalUrl?: string }, res: ServerResponse): void => {
    void handleNodeRequest(runloom, req, res, { ...options, parsedBody: req.body, target: req.originalUrl });
  };
}
