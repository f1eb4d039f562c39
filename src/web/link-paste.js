// "Paste many URLs" in the create box: one URL per line, optionally followed by a space and
// a shortcode, shortened through the bulk create (`POST /v1/links`) 100 lines at a time.
// Each line gets its short URL or, in plain words (messages.js), why it failed; the lines
// that failed stay in the box to fix and send again.
import { BULK_MAX, createLinks, messageOf } from './api.js';
import { announce, busy, byId, clearErrorOnEdit, clearErrors, setLink, showError, submitterOf } from './dom.js';
import { reloadLinks } from './links-list.js';
import { changed, links, noteDisabled } from './links-state.js';
import { describeError } from './messages.js';
import { parsePasted } from './pasted-lines.js';

/** @import { PastedLine } from './pasted-lines.js' */

/** How one line's outcome reads: its short URL, or the words why not. @typedef {{ shortUrl: string } | { error: string }} Outcome */

/**
 * Sends the lines in chunks of BULK_MAX and answers each one's outcome, in order. A chunk the
 * service refuses as a whole (an expired code, too many requests) ends the run: it and the
 * rest get that reason.
 * @param {PastedLine[]} lines
 * @returns {Promise<Outcome[]>}
 */
async function send(lines) {
  /** @type {Outcome[]} */
  const outcomes = lines.map((l) => ({ error: l.error ?? '' }));
  const toSend = lines.flatMap((l, i) => (l.body === null ? [] : [{ index: i, body: l.body }]));
  for (let start = 0; start < toSend.length; start += BULK_MAX) {
    const chunk = toSend.slice(start, start + BULK_MAX);
    let results;
    try {
      results = await createLinks(chunk.map((item) => item.body));
    } catch (error) {
      noteDisabled(error);
      const text = messageOf(error);
      for (const item of toSend.slice(start)) outcomes[item.index] = { error: text };
      break;
    }
    for (const [i, result] of results.entries()) {
      const item = chunk[i];
      if (item === undefined) continue;
      outcomes[item.index] = 'ShortUrl' in result ? { shortUrl: result.ShortUrl } : { error: describeError(result.Status, result.Error).text };
    }
  }
  return outcomes;
}

/**
 * One line of the results.
 * @param {string} line
 * @param {Outcome} outcome
 */
function resultItem(line, outcome) {
  const item = document.createElement('li');
  const ok = 'shortUrl' in outcome;
  item.dataset.ok = String(ok);
  const source = document.createElement('code');
  source.className = 'paste-line wrap-anywhere';
  const bdi = document.createElement('bdi');
  bdi.textContent = line;
  source.append(bdi);
  const result = document.createElement('p');
  if (ok) {
    result.className = 'paste-ok';
    const link = document.createElement('a');
    setLink(link, outcome.shortUrl);
    result.append(link);
  } else {
    result.className = 'error';
    result.textContent = outcome.error;
  }
  item.append(source, result);
  return item;
}

function hideResults() {
  byId('paste-results').hidden = true;
  byId('paste-summary').textContent = '';
  byId('paste-list').replaceChildren();
}

/** @param {SubmitEvent} event */
async function submitPaste(event) {
  event.preventDefault();
  clearErrors('paste-urls-error');
  const area = byId('paste-urls', HTMLTextAreaElement);
  area.removeAttribute('aria-invalid');
  hideResults();
  const lines = parsePasted(area.value);
  if (lines.length === 0) {
    showError('paste-urls-error', 'Paste at least one address, one per line.', area);
    area.focus();
    return;
  }
  // The count before: live events for the new links may move it while the calls run.
  const before = links.usage;
  const outcomes = await busy(submitterOf(event), () => send(lines));
  const made = outcomes.filter((o) => 'shortUrl' in o).length;
  const failed = outcomes.length - made;
  byId('paste-list').replaceChildren(...lines.map((l, i) => resultItem(l.line, outcomes[i] ?? { error: '' })));
  const rest = failed === 1 ? '; 1 line failed and stays in the box to fix.' : `; ${failed} lines failed and stay in the box to fix.`;
  const summary = `${made} short ${made === 1 ? 'link' : 'links'} created${failed === 0 ? '.' : rest}`;
  byId('paste-summary').textContent = summary;
  byId('paste-results').hidden = false;
  area.value = lines.filter((_, i) => !('shortUrl' in (outcomes[i] ?? { error: '' }))).map((l) => l.line).join('\n');
  if (made > 0) {
    if (before.exact) links.usage = { count: before.count + made, exact: true };
    changed();
  }
  announce(summary);
  byId('paste-results-heading').focus();
  if (made > 0) await reloadLinks();
}

/** On sign-out: the pasted lines and their results go. */
export function forgetPaste() {
  byId('paste-urls', HTMLTextAreaElement).value = '';
  byId('paste-urls').removeAttribute('aria-invalid');
  clearErrors('paste-urls-error');
  hideResults();
  byId('paste-box', HTMLDetailsElement).open = false;
}

/** Listens to the paste box. */
export function wirePasteForm() {
  byId('paste-form', HTMLFormElement).addEventListener('submit', submitPaste);
  clearErrorOnEdit(byId('paste-urls', HTMLTextAreaElement), 'paste-urls-error');
}
