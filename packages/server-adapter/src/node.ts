import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { handleNodeRequest, type MountOptions, type WebHandler } from './translate';

/** `http.createServer(createRequestListener(runloom))`: every request goes to Runloom. */
export function createRequestListener(runloom: WebHandler, options: MountOptions = {}): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    void handleNodeRequest(runloom, req, res, options);
  };
}
