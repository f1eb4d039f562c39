// The account's events, live (GET /v1/events, Server-Sent Events). Read with fetch() and the
// Authorization header rather than EventSource, which can send no header: the access code
// never goes into a URL (ADR 19). Reconnects after a pause when the stream ends or fails,
// and stops for good on 401/403 (the code changed, or the account is gone or disabled).
import { session } from './session.js';

/**
 * One event as the stream carries it.
 * @typedef {{ type: string, timestamp: string, data: any }} LiveEvent
 */

/**
 * Where the stream stands, for the Integrations view: `connecting` (first attempt), `live`,
 * `reconnecting` (after a break), `stopped` (refused: 401/403) or `off` (signed out).
 * @typedef {'connecting' | 'live' | 'reconnecting' | 'stopped' | 'off'} LiveState
 */

/** Pause before reconnecting, unless the server said otherwise (`retry:`). */
const RETRY_MS = 3000;

/** @type {AbortController | null} */
let current = null;

/**
 * Starts listening for the signed-in account's events, replacing any earlier stream.
 * `onOpen` runs each time the stream (re)opens, so the caller can catch up on what it missed.
 * @param {(event: LiveEvent) => void} onEvent
 * @param {() => void} [onOpen]
 * @param {(state: LiveState) => void} [onState]
 */
export function startLive(onEvent, onOpen = () => {}, onState = () => {}) {
  stopLive();
  const code = session.code;
  if (code === null || typeof ReadableStream === 'undefined' || typeof TextDecoderStream === 'undefined') return;
  const controller = new AbortController();
  current = controller;
  void run(code, controller.signal, onEvent, onOpen, onState);
}

/** Stops listening (sign-out, a new access code). */
export function stopLive() {
  current?.abort();
  current = null;
}

/**
 * @param {string} code
 * @param {AbortSignal} signal
 * @param {(event: LiveEvent) => void} onEvent
 * @param {() => void} onOpen
 * @param {(state: LiveState) => void} onState
 */
async function run(code, signal, onEvent, onOpen, onState) {
  let retryMs = RETRY_MS;
  let opened = 0;
  onState('connecting');
  while (!signal.aborted) {
    try {
      const response = await fetch('/v1/events', {
        headers: { authorization: `Bearer ${code}`, accept: 'text/event-stream' },
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
        signal,
      });
      if (response.status === 401 || response.status === 403) {
        onState('stopped');
        return;
      }
      if (response.ok && response.body !== null) {
        if (opened++ > 0) onOpen();
        onState('live');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            retryMs = handleFrame(frame, onEvent) ?? retryMs;
          }
        }
      } else {
        await response.body?.cancel();
      }
    } catch {
      // Aborted, or no answer: try again below unless stopped.
    }
    if (signal.aborted) return;
    onState('reconnecting');
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}

/**
 * Hands one frame's event on; answers the `retry:` it asks for, if any.
 * @param {string} frame
 * @param {(event: LiveEvent) => void} onEvent
 * @returns {number | undefined}
 */
function handleFrame(frame, onEvent) {
  let data = '';
  let retry;
  for (const line of frame.split('\n')) {
    if (line.startsWith('data:')) data += line.slice(line.startsWith('data: ') ? 6 : 5);
    else if (line.startsWith('retry:')) retry = Number(line.slice(6).trim()) || undefined;
  }
  if (data !== '') {
    try {
      onEvent(JSON.parse(data));
    } catch {
      // An event this page does not understand: skip it.
    }
  }
  return retry;
}
