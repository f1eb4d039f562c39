import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { PLAIN_TEXT } from './send-error.ts';

/**
 * Answers malformed HTTP (bad request line, oversized headers, timeouts) in plain text. It
 * runs below Fastify, on the socket, so the answer is written by hand.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return;
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408
    : error.code === 'HPE_URI_TOO_LONG' ? 414
    : 400;
  const body = `Unable to handle request: ${STATUS_CODES[status]!.toLowerCase()}`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PLAIN_TEXT}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}
