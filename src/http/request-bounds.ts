/** Bounds on what one client may hold or send; see docs/api.md, "Limits and timeouts". */
export const REQUEST_BOUNDS = {
  bodyBytes: 64 * 1024,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  // A 2000-character shortcode must reach the router intact (its default cap is 100).
  maxParamLength: 8 * 1024,
} as const;
