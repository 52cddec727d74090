import type { FastifyPluginAsync } from 'fastify';
import { handleNodeRequest, type MountOptions, type WebHandler } from './translate';

export interface RunloomFastifyOptions extends MountOptions {
  runloom: WebHandler;
}

/**
 * `app.register(runloomFastify, { runloom })`: a catch-all route handing the raw request to
 * Runloom. Inside this plugin's scope no body parser runs, so request bodies stream through.
 */
export const runloomFastify: FastifyPluginAsync<RunloomFastifyOptions> = async (fastify, { runloom, ...options }) => {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (_request, _payload, done) => done(null));
  fastify.all('/*', async (request, reply) => {
    reply.hijack();
    await handleNodeRequest(runloom, request.raw, reply.raw, options);
  });
};
