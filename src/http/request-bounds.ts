/** Bounds on what one client may hold or send; see docs/api.md, "Limits and timeouts". */
export const REQUEST_BOUNDS = {
  bodyBytes: 64 * 1024,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  // A 2000-character shortcode must reach the router intact (its default cap is 100).
  maxParamLength: 8 * 1024,
  // Pipelining: requests of one connection processed at once; more wait (reading stops) up to
  // maxWaiting, beyond which the connection is closed (connection-guard.ts).
  maxActivePerConnection: 16,
  maxWaitingPerConnection: 4096,
  // Answers a client leaves unread this long close its connection.
  sendStallMs: 10_000,
} as const;
