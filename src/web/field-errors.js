// Showing a failed call beside the field it concerns: the field comes from the table of
// messages.js (through explain), the input from the form's id prefix (`link-url`,
// `edit-max-visits`, `webhook-url`, `key-name`; `link-rules` is the rules editor's group).
import { explain } from './api.js';
import { showError } from './dom.js';

/** The input of each field, after the form's prefix. */
const INPUT_SUFFIX = /** @type {Record<string, string>} */ ({
  url: 'url',
  short: 'short',
  title: 'title',
  tags: 'tags',
  expires: 'expires',
  max_visits: 'max-visits',
  domain: 'domain',
  forward_query: 'forward-query',
  rules: 'rules',
  password: 'password',
  name: 'name',
});

/**
 * Shows an error beside the input it concerns (opening a closed <details> around it) and
 * focuses that input; else on the form's own line (`formErrorId`).
 * @param {string} prefix the form's id prefix
 * @param {unknown} error
 * @param {string} formErrorId
 */
export function showFieldError(prefix, error, formErrorId) {
  const { field, text } = explain(error);
  const suffix = INPUT_SUFFIX[field];
  const input = suffix === undefined ? null : document.getElementById(`${prefix}-${suffix}`);
  // A hidden input (the domain picker with one domain) cannot take the focus: the form's line.
  if ((input instanceof HTMLInputElement || input instanceof HTMLSelectElement || input instanceof HTMLFieldSetElement) &&
    input.closest('[hidden]') === null) {
    const details = input.closest('details');
    if (details !== null) details.open = true;
    showError(`${prefix}-${suffix}-error`, text, input);
    input.focus();
  } else {
    showError(formErrorId, text);
  }
}
