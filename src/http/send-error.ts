import type { FastifyReply } from 'fastify';

/** The media type of every plain-text answer: short URLs, `Success`, probes and errors. */
export const PLAIN_TEXT = 'text/plain; charset=utf-8';

/** Writes the contract's error form: one plain-text line, `Unable to <operation>: <reason>`. */
export function sendError(reply: FastifyReply, operation: string, status: number, reason: string, retryAfter?: number) {
  if (status === 401) reply.header('www-authenticate', 'Bearer realm="shortlink"');
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  return reply.code(status).type(PLAIN_TEXT).send(`Unable to ${operation}: ${reason}`);
}
