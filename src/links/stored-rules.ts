/**
 * Redirect rules as stored (CONTRACT §8.2): the JSON text of `{if, to}` objects, every
 * condition's value a list, written only after rules.ts has checked them. A redirect reads
 * them on every visit of a routed link, so each stored text is parsed once and remembered.
 */
import { createLru } from '../stats/lru.ts';

export interface StoredConditions {
  readonly device?: string[];
  readonly os?: string[];
  readonly country?: string[];
  readonly language?: string[];
  readonly query?: Record<string, string[]>;
}

export interface StoredRule {
  readonly if: StoredConditions;
  readonly to: string;
}

const parsed = createLru<string, readonly StoredRule[]>(1000);

/** The rules of a stored text (which storage wrote from checked rules). */
export function storedRules(text: string): readonly StoredRule[] {
  let rules = parsed.get(text);
  if (rules === undefined) {
    rules = JSON.parse(text) as StoredRule[];
    parsed.set(text, rules);
  }
  return rules;
}
