// The Integrations view: the live event stream's state, and the account's webhooks (add one
// with the events it wants, its signing secret shown once with a copy button, each one's
// delivery log with statuses and the next retry, delete after a second click). The API keys
// below them are keys-panel.js's.
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, messageOf } from './api.js';
import {
  announce,
  busy,
  buttonOf,
  byId,
  clearErrorOnEdit,
  clearErrors,
  clearInvalid,
  copyWithFeedback,
  dateText,
  setTime,
  showError,
  submitterOf,
  withScheme,
} from './dom.js';
import { showFieldError } from './field-errors.js';
import { forgetKeys, loadKeys, wireKeysPanel } from './keys-panel.js';
import { checkedValues, deleteAction, loadList, showOnce } from './managed-list.js';
import { noteDisabled } from './links-state.js';
import { onView } from './router.js';

/** @import { Delivery, Webhook } from '../http/schemas.ts' */

const WEBHOOK_LIST = { list: 'webhooks', empty: 'webhooks-empty', error: 'webhooks-error', heading: 'webhooks-heading' };
/** @import { LiveState } from './live.js' */

/** What each event type is called here. */
const EVENT_NAMES = /** @type {Record<string, string>} */ ({
  'link.created': 'Link created',
  'link.updated': 'Link changed',
  'link.deleted': 'Link deleted',
  'link.visited': 'Link visited',
  'account.rotated': 'Access code changed',
});

/** The words for the stream's states. */
const LIVE_TEXT = /** @type {Record<LiveState, string>} */ ({
  connecting: 'Connecting…',
  live: 'Connected: changes show up at once',
  reconnecting: 'Interrupted: reconnecting (the list reloads once back)',
  stopped: 'Stopped: the access code no longer opens the stream',
  off: 'Off',
});

/** The pauses before each retry (CONTRACT §7.5), then hourly until 24 h have passed. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 3_600_000];
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/** @param {LiveState} state */
export function showLiveState(state) {
  const element = byId('live-state');
  element.textContent = LIVE_TEXT[state];
  element.dataset.state = state;
}

/**
 * When a failed delivery is tried again: about `Time` plus the pause after its attempt
 * (±20%), or null once the 24 hours since the first attempt have passed.
 * @param {Delivery} delivery
 * @param {Delivery[]} all the webhook's attempts (to find the event's first)
 */
export function nextRetry(delivery, all) {
  const firsts = all.filter((d) => d.EventId === delivery.EventId).map((d) => Date.parse(d.Time) - 0);
  const first = Math.min(...firsts);
  const at = Date.parse(delivery.Time) + (RETRY_DELAYS_MS[delivery.Attempt - 1] ?? 3_600_000);
  return at - first > RETRY_WINDOW_MS ? null : new Date(at);
}

/** @param {Delivery} delivery */
function succeeded(delivery) {
  return delivery.Status !== null && delivery.Status >= 200 && delivery.Status < 300;
}

/**
 * The delivery log of one webhook, newest first.
 * @param {Delivery[]} deliveries
 */
function deliveryTable(deliveries) {
  const table = document.createElement('table');
  table.className = 'deliveries';
  const caption = document.createElement('caption');
  caption.className = 'visually-hidden';
  caption.textContent = 'Delivery attempts, newest first';
  const head = document.createElement('thead');
  const headRow = document.createElement('tr');
  for (const text of ['Time', 'Event', 'Attempt', 'Result', 'Next retry']) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = text;
    headRow.append(th);
  }
  head.append(headRow);
  const body = document.createElement('tbody');
  const sorted = [...deliveries].sort((a, b) => b.Time.localeCompare(a.Time));
  /** EventIds already shown with a later attempt: only the last attempt of an event has a retry. */
  const seen = new Set();
  for (const delivery of sorted) {
    const row = document.createElement('tr');
    const time = document.createElement('time');
    setTime(time, delivery.Time);
    const ok = succeeded(delivery);
    const result = ok ? `${delivery.Status} OK` : `${delivery.Status ?? 'No answer'}${delivery.Error === null ? '' : `: ${delivery.Error}`}`;
    let retry = '—';
    if (!ok && !seen.has(delivery.EventId)) {
      const at = nextRetry(delivery, deliveries);
      retry = at === null ? 'No more: gave up after 24 h' : `About ${dateText(at.toISOString())}`;
    }
    seen.add(delivery.EventId);
    const cells = [time, EVENT_NAMES[delivery.Type] ?? delivery.Type, String(delivery.Attempt), result, retry];
    for (const [i, content] of cells.entries()) {
      const cell = document.createElement(i === 0 ? 'th' : 'td');
      if (cell instanceof HTMLTableCellElement && i === 0) cell.scope = 'row';
      cell.append(content);
      if (i === 3) cell.dataset.ok = String(ok);
      row.append(cell);
    }
    body.append(row);
  }
  table.append(caption, head, body);
  return table;
}

/**
 * One webhook of the list.
 * @param {Webhook} webhook
 */
function webhookItem(webhook) {
  const item = document.createElement('li');
  item.className = 'webhook';
  item.dataset.id = webhook.Id;
  const url = document.createElement('p');
  url.className = 'webhook-url wrap-anywhere';
  const bdi = document.createElement('bdi');
  bdi.textContent = webhook.Url;
  url.append(bdi);
  const meta = document.createElement('p');
  meta.className = 'hint';
  const created = document.createElement('time');
  setTime(created, webhook.DateCreated);
  meta.append(`${webhook.Events.map((e) => EVENT_NAMES[e] ?? e).join(', ')} · added `, created);

  const log = document.createElement('details');
  log.className = 'options deliveries-log';
  const summary = document.createElement('summary');
  summary.textContent = 'Deliveries';
  const logBody = document.createElement('div');
  log.append(summary, logBody);
  log.addEventListener('toggle', () => {
    if (log.open) void loadDeliveries(webhook.Id, logBody);
  });

  const { actions, error } = deleteAction({
    ids: WEBHOOK_LIST, item, name: `webhook ${webhook.Url}`, remove: () => deleteWebhook(webhook.Id),
    warning: 'Click Delete again to delete this webhook: its deliveries stop at once.',
    done: `Deleted the webhook to ${webhook.Url}.`,
  });
  item.append(url, meta, log, actions, error);
  return item;
}

/**
 * @param {string} id
 * @param {HTMLElement} box
 */
async function loadDeliveries(id, box) {
  box.setAttribute('aria-busy', 'true');
  try {
    const deliveries = await listDeliveries(id);
    if (deliveries.length === 0) {
      const p = document.createElement('p');
      p.className = 'hint';
      p.textContent = 'No deliveries yet.';
      box.replaceChildren(p);
    } else {
      const scroll = document.createElement('div');
      scroll.className = 'table-scroll';
      scroll.append(deliveryTable(deliveries));
      box.replaceChildren(scroll);
    }
  } catch (error) {
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = messageOf(error);
    box.replaceChildren(p);
  } finally {
    box.removeAttribute('aria-busy');
  }
}

/** Loads and shows the account's webhooks. */
function loadWebhooks() {
  return loadList(WEBHOOK_LIST, listWebhooks, webhookItem);
}

function hideSecret() {
  showOnce('webhook-secret');
}

/** @param {SubmitEvent} event */
async function submitWebhook(event) {
  event.preventDefault();
  const form = byId('webhook-form', HTMLFormElement);
  clearErrors('webhook-url-error', 'webhook-events-error', 'webhook-form-error');
  clearInvalid(form);
  hideSecret();
  const input = byId('webhook-url', HTMLInputElement);
  const url = withScheme(input.value.trim());
  if (url !== input.value.trim()) input.value = url;
  const events = checkedValues('webhook-events');
  if (url === '') {
    showError('webhook-url-error', 'Enter the address of your receiver.', input);
    input.focus();
    return;
  }
  if (events.length === 0) {
    showError('webhook-events-error', 'Pick at least one event.');
    byId('webhook-event-created').focus();
    return;
  }
  let created;
  try {
    created = await busy(submitterOf(event), () => createWebhook(url, events));
  } catch (error) {
    noteDisabled(error);
    showFieldError('webhook', error, 'webhook-form-error');
    return;
  }
  input.value = '';
  showOnce('webhook-secret', created.Secret);
  announce('Webhook added. Save its signing secret now: it is shown only once.');
  await loadWebhooks();
}

/** On sign-out: no webhook, secret, log or key of the account stays. */
export function forgetIntegrations() {
  forgetKeys();
  hideSecret();
  byId('webhooks').replaceChildren();
  byId('webhooks-empty').hidden = true;
  const form = byId('webhook-form', HTMLFormElement);
  form.reset();
  clearInvalid(form);
  clearErrors('webhook-url-error', 'webhook-events-error', 'webhook-form-error', 'webhooks-error');
}

/** Listens to the Integrations view, and loads the webhooks and keys each time it is shown. */
export function wireIntegrationsView() {
  onView('integrations', () => {
    void loadWebhooks();
    void loadKeys();
  });
  wireKeysPanel();
  byId('webhook-form', HTMLFormElement).addEventListener('submit', submitWebhook);
  clearErrorOnEdit(byId('webhook-url', HTMLInputElement), 'webhook-url-error', 'webhook-form-error');
  byId('webhooks-refresh', HTMLButtonElement).addEventListener('click', (event) => busy(buttonOf(event), loadWebhooks));
  byId('copy-webhook-secret', HTMLButtonElement).addEventListener('click', (event) =>
    copyWithFeedback(buttonOf(event), byId('webhook-secret-value').textContent ?? '', 'signing secret'));
  byId('dismiss-webhook-secret', HTMLButtonElement).addEventListener('click', () => {
    hideSecret();
    byId('webhooks-heading').focus();
  });
}
