/** Bounds on what one client may hold or send; see docs/api.md, "Limits and timeouts". */
export const REQUEST_BOUNDS = {
  bodyBytes: 64 * 1024,
  /** A bulk create's body (`POST /v1/links`): 100 items, each up to a long URL, title and tags. */
  bulkBodyBytes: 1024 * 1024,
  /** The most links one bulk create may hold (CONTRACT §8.4). */
  bulkItems: 100,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  /**
   * A request is answered 503 at the latest this long after STORAGE_TIMEOUT from when its
   * headers arrived, whatever it waits for: storage calls fail at STORAGE_TIMEOUT on their
   * own, this catches anything else (a rate-limit counter, a bug) and leaves them the time
   * to answer first with their own error.
   */
  handlerMarginMs: 1_000,
  // A 2000-character shortcode must reach the router intact (its default cap is 100).
  maxParamLength: 8 * 1024,
  // Pipelining: requests of one connection processed at once; more wait (reading stops) up to
  // maxWaiting, beyond which the connection is closed (connection-guard.ts).
  maxActivePerConnection: 16,
  maxWaitingPerConnection: 4096,
  // Answers a client leaves unread this long close its connection.
  sendStallMs: 10_000,
} as const;
