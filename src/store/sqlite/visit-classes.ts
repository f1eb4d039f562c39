/**
 * Visitor classes by number, on SQLite (ADR 29, addendum): the tallies a link's row holds
 * name their classes (bot, referrer, country, browser, OS, device) by a number from the
 * table `visit_classes`, a few characters instead of about 45. Rows stay short, so the first
 * visits of an hour split fewer pages of `links`, and a row holds about ten times as many
 * kinds of visitor before it hands them to the tuples.
 *
 * A number is assigned inside the count's write transaction (SQLite's write lock orders the
 * processes sharing the file, and the classes are unique), and stays: rows are never
 * deleted, so a number names the same classes for every process for good. A process keeps
 * the numbers it has seen in two bounded caches; one it assigned joins them only once its
 * transaction has committed (`begin` and `finished`), since a rolled back number is given to
 * the next new classes.
 */
import type { DatabaseSync } from 'node:sqlite';
import { createLru } from '../../stats/lru.ts';
import type { VisitClasses } from '../../stats/visit.ts';

/** Numbers (and classes) a process keeps, per cache generation. */
const CACHE_SIZE = 10_000;

/** bot (0/1), referrer, country, browser, os and device, one line each: the classes as stored. */
export function classesKey(visit: VisitClasses): string {
  return `${visit.bot ? 1 : 0}\n${visit.referrer}\n${visit.country}\n${visit.browser}\n${visit.os}\n${visit.device}`;
}

/** The classes a classesKey names. */
function classesOfKey(key: string): VisitClasses {
  const [bot, referrer, country, browser, os, device] = key.split('\n') as [string, string, string, string, string, string];
  return { bot: bot === '1', referrer, country, browser, os, device: device as VisitClasses['device'] };
}

/** The numbers a count transaction assigned: classes key → number. */
export type Assigned = Map<string, string>;

export interface VisitClassIds {
  /** The number of some classes (a classesKey), in base 36; one not yet known is assigned (in the count's transaction). */
  idOf(key: string): string;
  /**
   * The classes a tally names: by number (idOf), or by their classesKey itself, as the rows of
   * the release before this one hold them.
   */
  classesOf(id: string): VisitClasses;
  /** At the start of a count transaction's attempt: the numbers it assigns go to the map answered. */
  begin(): Assigned;
  /** Once that transaction has ended: if it committed, its numbers join the caches; else they are forgotten. */
  finished(assigned: Assigned, committed: boolean): void;
}

const byDatabase = new WeakMap<DatabaseSync, VisitClassIds>();

/** One per connection: the count (which assigns) and the statistics' reads and folds share it. */
export function visitClassIds(db: DatabaseSync): VisitClassIds {
  let ids = byDatabase.get(db);
  if (ids === undefined) {
    ids = createVisitClassIds(db);
    byDatabase.set(db, ids);
  }
  return ids;
}

function createVisitClassIds(db: DatabaseSync): VisitClassIds {
  const statements = {
    idOf: db.prepare('SELECT id FROM visit_classes WHERE classes = ?'),
    assign: db.prepare('INSERT INTO visit_classes (classes) VALUES (?) RETURNING id'),
    classesOf: db.prepare('SELECT classes FROM visit_classes WHERE id = ?'),
  };
  for (const statement of Object.values(statements)) statement.setReturnArrays(true);
  const numbers = createLru<string, string>(CACHE_SIZE);
  const classes = createLru<string, VisitClasses>(CACHE_SIZE);
  /** The current attempt's numbers, not yet committed: never cached before they are. */
  let assigned: Assigned = new Map();
  /** The same, number → classes key. */
  let assignedKeys = new Map<string, string>();

  return {
    idOf(key) {
      const known = numbers.get(key) ?? assigned.get(key);
      if (known !== undefined) return known;
      // Committed by this process or another (this attempt's own are all in `assigned`).
      const [stored] = (statements.idOf.get(key) as unknown as [number] | undefined) ?? [];
      if (stored !== undefined) {
        const id = stored.toString(36);
        numbers.set(key, id);
        return id;
      }
      const [added] = statements.assign.get(key) as unknown as [number];
      const id = added.toString(36);
      assigned.set(key, id);
      assignedKeys.set(id, key);
      return id;
    },

    classesOf(id) {
      if (id.includes('\n')) return classesOfKey(id);
      const known = classes.get(id);
      if (known !== undefined) return known;
      const pending = assignedKeys.get(id);
      if (pending !== undefined) return classesOfKey(pending);
      const [key] = (statements.classesOf.get(parseInt(id, 36)) as unknown as [string] | undefined) ?? [];
      // A tally commits with its number, so every number a row holds is in the table.
      if (key === undefined) throw new Error(`visit classes ${id} are not in visit_classes`);
      const found = classesOfKey(key);
      classes.set(id, found);
      return found;
    },

    begin() {
      assigned = new Map();
      assignedKeys = new Map();
      return assigned;
    },

    finished(done, committed) {
      if (committed) for (const [key, id] of done) numbers.set(key, id);
      if (done === assigned) {
        assigned = new Map();
        assignedKeys = new Map();
      }
    },
  };
}
