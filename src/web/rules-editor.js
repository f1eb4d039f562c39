// The rules editor of the create form and of the edit dialog (`link-rules…`, `edit-rules…`,
// both copies of index.html's `rules-fieldset` template): a numbered list of rules, each with
// its conditions and target, and buttons to add, remove and move them (real buttons, named
// "Move rule 2 Up" and so on); and the preview line "A visitor … goes to …" for a visitor
// picked in small fields under it. The drafts are the state; the list is drawn again from them
// after every add, remove or move.
import { announce, byId, withScheme } from './dom.js';
import { DEVICES, draftOf, emptyDraft, MAX_RULES, OS_FAMILIES, previewText, ruleOf, targetFor, VALUE_NAMES } from './rules.js';

/** @import { LinkDetails } from '../http/schemas.ts' */
/** @import { RuleInput } from './api.js' */
/** @import { RuleDraft } from './rules.js' */

/**
 * @typedef {object} RulesEditor
 * @property {() => RuleInput[]} rules the rules as the API takes them
 * @property {(rules: LinkDetails['Rules']) => void} load shows a link's rules
 * @property {() => void} reset no rules
 */

/**
 * A labelled field: label, input and an optional hint tied to it.
 * @param {string} id
 * @param {string} label
 * @param {HTMLInputElement | HTMLTextAreaElement} input
 * @param {string} [hint]
 */
function field(id, label, input, hint) {
  const wrap = document.createElement('div');
  wrap.className = 'field';
  const labelElement = document.createElement('label');
  labelElement.htmlFor = id;
  labelElement.textContent = label;
  input.id = id;
  wrap.append(labelElement, input);
  if (hint !== undefined) {
    const p = document.createElement('p');
    p.className = 'hint';
    p.id = `${id}-hint`;
    p.textContent = hint;
    input.setAttribute('aria-describedby', p.id);
    wrap.append(p);
  }
  return wrap;
}

/**
 * A text input of a rule.
 * @param {string} value
 */
function textInput(value) {
  const input = document.createElement('input');
  input.type = 'text';
  input.value = value;
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.setAttribute('autocapitalize', 'off');
  return input;
}

/**
 * A button whose accessible name says which rule it acts on: `<hidden before>Visible<hidden after>`.
 * @param {string} action data-action
 * @param {string} before
 * @param {string} visible
 * @param {string} after
 */
function ruleButton(action, before, visible, after) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'small';
  button.dataset.action = action;
  for (const [text, hidden] of /** @type {const} */ ([[before, true], [visible, false], [after, true]])) {
    if (text === '') continue;
    if (!hidden) {
      button.append(text);
      continue;
    }
    const span = document.createElement('span');
    span.className = 'visually-hidden';
    span.textContent = text;
    button.append(span);
  }
  return button;
}

/** The attributes of the rules template that name its own elements. */
const REFERENCES = ['id', 'for', 'aria-describedby', 'aria-labelledby'];

/**
 * Puts a copy of the rules template (index.html) in place of `#{prefix}-rules-slot`, its
 * ids and the references to them carrying `prefix` where the template has "@".
 * @param {string} prefix
 */
function placeFieldset(prefix) {
  const template = byId('rules-fieldset', HTMLTemplateElement);
  const copy = /** @type {DocumentFragment} */ (template.content.cloneNode(true));
  for (const element of copy.querySelectorAll('*')) {
    for (const name of REFERENCES) {
      const value = element.getAttribute(name);
      if (value !== null) element.setAttribute(name, value.replaceAll('@-', `${prefix}-`));
    }
  }
  byId(`${prefix}-rules-slot`).replaceWith(copy);
}

/**
 * Wires the editor whose elements carry this prefix (`link`, `edit`), first putting its
 * fieldset in the form.
 * @param {string} prefix
 * @returns {RulesEditor}
 */
export function createRulesEditor(prefix) {
  placeFieldset(prefix);
  /** @type {RuleDraft[]} */
  let drafts = [];
  const list = byId(`${prefix}-rules-list`, HTMLOListElement);
  const add = byId(`${prefix}-rule-add`, HTMLButtonElement);
  const preview = byId(`${prefix}-rules-preview`, HTMLOutputElement);
  const target = byId(`${prefix}-url`, HTMLInputElement);
  const visitorFields = {
    device: byId(`${prefix}-preview-device`, HTMLSelectElement),
    os: byId(`${prefix}-preview-os`, HTMLSelectElement),
    country: byId(`${prefix}-preview-country`, HTMLInputElement),
    language: byId(`${prefix}-preview-language`, HTMLInputElement),
    query: byId(`${prefix}-preview-query`, HTMLInputElement),
  };

  // A bare host and path as a rule's target gets https:// like the link's own (dom.js withScheme).
  const rules = () => drafts.map(ruleOf).map((rule) => ({ ...rule, to: withScheme(rule.to) }));

  function showPreview() {
    const visitor = {
      device: visitorFields.device.value,
      os: visitorFields.os.value,
      country: visitorFields.country.value,
      language: visitorFields.language.value,
      query: visitorFields.query.value,
    };
    preview.value = previewText(visitor, targetFor(rules(), visitor, target.value.trim()));
  }

  /**
   * A group of checkboxes for one condition.
   * @param {RuleDraft} draft
   * @param {number} n the rule's number
   * @param {'device' | 'os'} name
   * @param {readonly string[]} values
   * @param {string} legendText
   */
  function checkboxes(draft, n, name, values, legendText) {
    const group = document.createElement('fieldset');
    group.className = 'rule-choices';
    const legend = document.createElement('legend');
    legend.textContent = legendText;
    group.append(legend);
    for (const value of values) {
      const label = document.createElement('label');
      label.className = 'check';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.id = `${prefix}-rule-${n}-${name}-${value}`;
      box.value = value;
      box.checked = draft[name].includes(value);
      box.addEventListener('change', () => {
        draft[name] = values.filter((v) => (v === value ? box.checked : draft[name].includes(v)));
        showPreview();
      });
      label.append(box, ` ${VALUE_NAMES[value] ?? value}`);
      group.append(label);
    }
    return group;
  }

  /**
   * One rule's item.
   * @param {RuleDraft} draft
   * @param {number} i
   */
  function ruleItem(draft, i) {
    const n = i + 1;
    const item = document.createElement('li');
    item.className = 'rule';
    const group = document.createElement('fieldset');
    const legend = document.createElement('legend');
    legend.textContent = `Rule ${n}`;
    group.append(legend);

    const country = textInput(draft.country);
    country.addEventListener('input', () => { draft.country = country.value; showPreview(); });
    const language = textInput(draft.language);
    language.addEventListener('input', () => { draft.language = language.value; showPreview(); });
    const query = document.createElement('textarea');
    query.rows = 2;
    query.value = draft.query;
    query.spellcheck = false;
    query.setAttribute('autocapitalize', 'off');
    query.addEventListener('input', () => { draft.query = query.value; showPreview(); });
    const to = textInput(draft.to);
    to.type = 'url';
    to.inputMode = 'url';
    to.addEventListener('input', () => { draft.to = to.value; showPreview(); });

    const conditions = document.createElement('div');
    conditions.className = 'rule-conditions';
    conditions.append(
      checkboxes(draft, n, 'device', DEVICES, 'Device'),
      checkboxes(draft, n, 'os', OS_FAMILIES, 'Operating system'),
      field(`${prefix}-rule-${n}-country`, 'Countries', country, 'ISO codes, by commas: DE, AT'),
      field(`${prefix}-rule-${n}-language`, 'Languages', language, 'By commas: de, fr'),
      field(`${prefix}-rule-${n}-query`, 'Query parameters', query, 'name=value, one per line'),
    );
    const actions = document.createElement('div');
    actions.className = 'rule-actions';
    const up = ruleButton('up', `Move rule ${n} `, 'Up', '');
    up.disabled = i === 0;
    up.addEventListener('click', () => move(i, -1, 'up'));
    const down = ruleButton('down', `Move rule ${n} `, 'Down', '');
    down.disabled = i === drafts.length - 1;
    down.addEventListener('click', () => move(i, 1, 'down'));
    const remove = ruleButton('remove', '', 'Remove', ` rule ${n}`);
    remove.classList.add('danger');
    remove.addEventListener('click', () => removeRule(i));
    actions.append(up, down, remove);
    group.append(conditions, field(`${prefix}-rule-${n}-to`, 'Then send to', to, 'When every condition filled in holds'), actions);
    item.append(group);
    return item;
  }

  function render() {
    list.replaceChildren(...drafts.map(ruleItem));
    list.hidden = drafts.length === 0;
    add.disabled = drafts.length >= MAX_RULES;
    byId(`${prefix}-rules-count`).textContent = drafts.length === 0
      ? 'No rules: every visit goes to the target URL.'
      : `${drafts.length} of at most ${MAX_RULES} rules, tried in order; the first that matches wins.`;
    showPreview();
  }

  /**
   * Focuses a button of rule `n` (from 1), or the next best thing when it is disabled.
   * @param {number} n
   * @param {string} action
   */
  function focusRule(n, action) {
    const item = list.children[n - 1];
    const wanted = item?.querySelector(`button[data-action="${action}"]:not(:disabled)`) ??
      item?.querySelector('button[data-action]:not(:disabled)');
    if (wanted instanceof HTMLElement) wanted.focus();
    else add.focus();
  }

  /**
   * @param {number} i
   * @param {-1 | 1} by
   * @param {'up' | 'down'} action
   */
  function move(i, by, action) {
    const j = i + by;
    const moving = drafts[i];
    const other = drafts[j];
    if (moving === undefined || other === undefined) return;
    drafts[j] = moving;
    drafts[i] = other;
    render();
    focusRule(j + 1, action);
    announce(`Rule ${i + 1} is now rule ${j + 1}.`);
  }

  /** @param {number} i */
  function removeRule(i) {
    drafts.splice(i, 1);
    render();
    if (drafts.length === 0) add.focus();
    else focusRule(Math.min(i + 1, drafts.length), 'remove');
    announce(`Rule ${i + 1} removed. ${drafts.length === 1 ? '1 rule is' : `${drafts.length} rules are`} left.`);
  }

  add.addEventListener('click', () => {
    if (drafts.length >= MAX_RULES) return;
    drafts.push(emptyDraft());
    render();
    const first = list.lastElementChild?.querySelector('input');
    if (first instanceof HTMLElement) first.focus();
    announce(`Rule ${drafts.length} added.`);
  });
  for (const input of Object.values(visitorFields)) input.addEventListener('input', showPreview);
  target.addEventListener('input', showPreview);
  render();

  return {
    rules,
    load(linkRules) {
      drafts = (Array.isArray(linkRules) ? linkRules : []).map(draftOf);
      render();
    },
    reset() {
      drafts = [];
      for (const input of Object.values(visitorFields)) input.value = '';
      render();
    },
  };
}
