import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './error-handler.ts';
import { AppError } from './errors.ts';

/**
 * Errors Fastify's router raises before any route runs (a path segment over maxParamLength, a
 * malformed URL), answered in Tessera's error format. The path is not echoed: it may be huge.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const mapped =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('uri_too_long', 'The URL path is too long: a path segment may have at most 500 characters')
      : new AppError(
          'bad_request',
          error.code === 'FST_ERR_BAD_URL' ? 'The URL is malformed' : 'The request could not be routed',
        );
  reply.header('x-request-id', request.id);
  sendError(request, reply, mapped);
}

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (request line or headers over
 * the limit, malformed HTTP), answered on the raw socket in Tessera's error format.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request line or headers are too large (at most 16 KiB in all; long URLs count)']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'bad_request', 'The request took too long to arrive']
        : [400, 'bad_request', 'The request is not valid HTTP'];
  const requestId = randomUUID();
  const body = JSON.stringify({ status: 'error', code, message, requestId });
  const reason =
    status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
