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
 * the numbers it has read from the table in two bounded caches. One it assigns itself is
 * known only while the count's work runs (`assigning`), and is read from the table when next
 * needed: the transaction may still roll back, and a rolled back number is given to the next
 * new classes.
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

export interface VisitClassIds {
  /** The number of some classes (a classesKey), in base 36; one not yet known is assigned (in the count's transaction). */
  idOf(key: string): string;
  /**
   * The classes a tally names: by number (idOf), or by their classesKey itself, as the rows of
   * the release before this one hold them.
   */
  classesOf(id: string): VisitClasses;
  /**
   * Runs a count transaction's work (each attempt's): the numbers idOf assigns meanwhile are
   * known until it returns or throws, and cached only once read back after their commit.
   */
  assigning<R>(work: () => R): R;
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
  // Only numbers read from the table: every one of those was committed, since the work's own
  // are found in `assigned` first.
  const numbers = createLru<string, string>(CACHE_SIZE);
  const classes = createLru<string, VisitClasses>(CACHE_SIZE);
  /** The numbers the running work assigned (classes key → number), and the other way round. */
  const assigned = new Map<string, string>();
  const assignedKeys = new Map<string, string>();

  return {
    idOf(key) {
      const known = numbers.get(key) ?? assigned.get(key);
      if (known !== undefined) return known;
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

    assigning(work) {
      try {
        return work();
      } finally {
        assigned.clear();
        assignedKeys.clear();
      }
    },
  };
}
