// The domains the account may use (GET /v1/domains, CONTRACT §8.1), asked for once per
// sign-in: they give each link's short URL its origin (links-state.js originOf), and, when
// there is more than one, the create form's domain picker and the list's domain filter.
import { listDomains } from './api.js';
import { byId } from './dom.js';
import { changed, links } from './links-state.js';

/**
 * Fills a <select> with the domains, keeping its choice when it is still there.
 * @param {HTMLSelectElement} select
 * @param {{ value: string, text: string }[]} options
 */
function fill(select, options) {
  const kept = select.value;
  select.replaceChildren(...options.map(({ value, text }) => {
    const option = document.createElement('option');
    option.value = value;
    option.textContent = text;
    return option;
  }));
  select.value = options.some((option) => option.value === kept) ? kept : (options[0]?.value ?? '');
}

/** Shows the picker and the filter when there is a choice to make, with the domains known. */
function renderDomains() {
  const many = links.domains.length > 1;
  byId('link-domain-field').hidden = !many;
  byId('filter-domain-field').hidden = !many;
  const [first] = links.domains;
  // The default domain's value is '' (no `domain` parameter): it is the default either way.
  fill(byId('link-domain', HTMLSelectElement), links.domains.map((domain) => ({
    value: domain === first ? '' : domain.Host,
    text: domain === first ? `${domain.Host} (default)` : domain.Host,
  })));
  fill(byId('filter-domain', HTMLSelectElement), [
    { value: '', text: 'All domains' },
    ...links.domains.map((domain) => ({ value: domain.Host, text: domain === first ? `${domain.Host} (default)` : domain.Host })),
  ]);
}

/**
 * Asks for the domains. Never throws: without them the page works on the default domain
 * alone, as before domains existed.
 */
export async function loadDomains() {
  try {
    links.domains = await listDomains();
  } catch {
    links.domains = [];
  }
  renderDomains();
  changed();
}

/** The host picked in the create form ('' for the default domain). */
export function pickedDomain() {
  return byId('link-domain-field').hidden ? '' : byId('link-domain', HTMLSelectElement).value;
}

/** On sign-out: no domain is known; the picker and the filter go. */
export function forgetDomains() {
  links.domains = [];
  renderDomains();
}
