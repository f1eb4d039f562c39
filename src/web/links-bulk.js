// The list's selection and export: "select all", adding tags to the selected links (each
// keeps its own), deleting them (the delete dialog asks), and the CSV of every link the search
// matches, all pages, in the list's order.
import { listLinks, messageOf, updateLink } from './api.js';
import { announce, busy, byId, clearErrors, showError } from './dom.js';
import { openDeleteDialog } from './link-delete.js';
import { linksCsv } from './links-csv.js';
import { renderSelection, tagsParameter } from './links-list.js';
import { changed, linkKey, links, noteDisabled, shortUrlOf, sortLinks, STATE_TEXT, stateOf } from './links-state.js';

/** @import { LinkDetails } from '../http/schemas.ts' */

/** Links asked for per page by the CSV export. */
const EXPORT_PAGE = 1000;

/** The links ticked, as loaded. */
export function selectedLinks() {
  return links.list.filter((link) => links.selected.has(linkKey(link)));
}

/** Adds the typed tags to every selected link (each keeps its own). */
async function bulkTag() {
  clearErrors('bulk-error');
  const input = byId('bulk-tags', HTMLInputElement);
  const adding = tagsParameter(input.value).toLowerCase().split(',').filter((tag) => tag !== '');
  if (adding.length === 0) {
    showError('bulk-error', 'Type the tags to add, separated by commas.', input);
    input.focus();
    return;
  }
  const chosen = selectedLinks();
  /** @type {string[]} */
  const failures = [];
  await busy(byId('bulk-tag', HTMLButtonElement), async () => {
    for (const link of chosen) {
      const tags = [...new Set([...(link.Tags ?? []), ...adding])];
      if (tags.length === (link.Tags ?? []).length) continue;
      try {
        const updated = await updateLink(link, { tags: tags.join(',') });
        links.list = links.list.map((l) => (linkKey(l) === linkKey(link) ? updated : l));
      } catch (error) {
        noteDisabled(error);
        failures.push(`${link.ShortCode}: ${messageOf(error)}`);
      }
    }
  });
  changed();
  if (failures.length > 0) {
    showError('bulk-error', `Not tagged: ${failures.join(' ')}`);
    return;
  }
  input.value = '';
  input.removeAttribute('aria-invalid');
  announce(`Tagged ${chosen.length} ${chosen.length === 1 ? 'link' : 'links'} with ${adding.join(', ')}.`);
}

/** The last export's object URL, released when the next is made. */
const exported = { url: /** @type {string | null} */ (null) };

/** Every link the search matches (all pages), downloaded as CSV. */
async function exportCsv() {
  clearErrors('links-error');
  /** @type {LinkDetails[]} */
  let all = [];
  try {
    await busy(byId('export-csv', HTMLButtonElement), async () => {
      /** @type {string | null} */
      let cursor = null;
      do {
        const page = await listLinks({ ...links.filter, order: links.order, limit: EXPORT_PAGE, cursor });
        all = all.concat(page.links);
        cursor = page.next;
      } while (cursor !== null);
    });
  } catch (error) {
    if (!noteDisabled(error)) showError('links-error', messageOf(error));
    return;
  }
  const text = linksCsv(sortLinks(all, links.order), shortUrlOf, (link) => STATE_TEXT[stateOf(link)]);
  if (exported.url !== null) URL.revokeObjectURL(exported.url);
  exported.url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = exported.url;
  a.download = `shortlink-links-${new Date().toISOString().slice(0, 10)}.csv`;
  a.click();
  announce(`Downloading ${all.length} ${all.length === 1 ? 'link' : 'links'} as ${a.download}.`);
}

/** Listens to the selection's and the export's controls. */
export function wireLinksBulk() {
  byId('export-csv', HTMLButtonElement).addEventListener('click', exportCsv);
  byId('select-all', HTMLInputElement).addEventListener('change', (event) => {
    const on = event.currentTarget instanceof HTMLInputElement && event.currentTarget.checked;
    links.selected.clear();
    if (on) for (const link of links.list) links.selected.add(linkKey(link));
    for (const box of byId('links').querySelectorAll('input.select')) {
      if (box instanceof HTMLInputElement) box.checked = on;
    }
    renderSelection();
  });
  byId('bulk-clear', HTMLButtonElement).addEventListener('click', () => {
    links.selected.clear();
    changed();
    byId('select-all').focus();
  });
  byId('bulk-tag', HTMLButtonElement).addEventListener('click', bulkTag);
  byId('bulk-tags', HTMLInputElement).addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void bulkTag();
    }
  });
  byId('bulk-delete', HTMLButtonElement).addEventListener('click', () => openDeleteDialog(selectedLinks()));
}
