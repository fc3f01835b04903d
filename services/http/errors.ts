import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors.ts';
import { MAX_PATH_PARAM_LENGTH } from '../core/statuses.ts';
import type { EngineWatch } from '../core/engines.ts';

/** Fastify's own client errors, reworded into our `{ error }` shape. */
function frameworkClientError(error: FastifyError): { status: number; message: string } | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
      return { status: 413, message: 'Request body too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'Unsupported content type' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'Empty JSON body' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, message: 'Malformed JSON body' };
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { status: 400, message: 'Expected multipart/form-data' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 414, message: `A path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters` };
    case 'FST_ERR_BAD_URL':
      return { status: 400, message: 'Malformed URL' };
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return { status: 400, message: 'Malformed JSON body' };
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, message: error.message };
  }
  return null;
}

/** The one error handler: typed errors carry their status; anything unexpected is a 500 that says nothing. */
export function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof AppError) {
    if (error.status >= 500) request.log.error({ err: error }, 'operation failed');
    return reply.code(error.status).headers(error.headers).send({ error: error.message });
  }
  const client = frameworkClientError(error);
  if (client) return reply.code(client.status).send({ error: client.message });
  request.log.error({ err: error }, 'unexpected failure');
  return reply.code(500).send({ error: 'Internal server error' });
}

/**
 * Installs `sendError` for route errors. The router's own refusals (a path parameter too long, a
 * malformed URL) happen before any route and reach it through Fastify's `frameworkErrors` option,
 * which `buildApp` points at `sendError` too. A route that is no operation (site resolution, media
 * files, OAuth) and found an engine missing answers the same 503 as the operations.
 */
export function installErrorHandling(app: FastifyInstance, engines: EngineWatch): void {
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(engines.classify(error) as FastifyError, request, reply));

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'Not found' }));
}
