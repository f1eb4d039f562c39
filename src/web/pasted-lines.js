// The text of "Paste many URLs" as the lines to send: one URL per line, optionally followed
// by a space and a shortcode. Pure (no page access), so it runs in Node too
// (test/web/dashboard-helpers.test.ts).
import { withScheme } from './dom.js';

/** @import { LinkFields } from './api.js' */

/**
 * One pasted line: what is sent, or why it is not (a line the page can already tell is wrong).
 * @typedef {{ line: string, body: LinkFields | null, error: string | null }} PastedLine
 */

/**
 * The box's text as lines to send: blank lines are skipped; `URL` or `URL CODE`.
 * @param {string} text
 * @returns {PastedLine[]}
 */
export function parsePasted(text) {
  /** @type {PastedLine[]} */
  const lines = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    const parts = line.split(/\s+/);
    if (parts.length > 2) {
      lines.push({ line, body: null, error: 'Write one address per line, optionally followed by a space and a shortcode.' });
      continue;
    }
    /** @type {LinkFields} */
    const body = { url: withScheme(parts[0] ?? '') };
    if (parts[1] !== undefined) body.short = parts[1];
    lines.push({ line, body, error: null });
  }
  return lines;
}

