export { toWebRequest, sendWebResponse, handleNodeRequest, type ToWebRequestOptions, type MountOptions, type WebHandler } from './translate';
export { createRequestListener } from './node';
export { runloomMiddleware } from './express';
export { runloomFastify, type RunloomFastifyOptions } from './fastify';
