/**
 * The baseline: a bare node:http server answering a small JSON body, the ceiling any
 * framework on this machine is measured against.
 */
import { createServer } from 'node:http';

const body = JSON.stringify({ ShortCode: 'abcdef', PointsTo: 'https://example.com/', CreatedBy: 1, Accesses: 1 });
const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
