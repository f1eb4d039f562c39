/**
 * `npm run bench:count`: what the SQLite count batch itself costs per visit, without HTTP: the
 * real store (`openSqliteStore`, its checkpointer thread on, as the server runs it) on a
 * preloaded database, resolutions issued in groups that become one batch each, with and
 * without a visit's statistics. Prints this process's CPU per visit (all threads: the
 * checkpointer's too) and its write and read system calls per visit (/proc/self/io), the
 * figures that say where a visit's storage cost goes (docs/performance.md); and, with
 * statistics, what the folds cost per visit once the hour is over (the rounds' visits moved on
 * to the rollups).
 *
 * Environment: COUNT_LINKS (comma-separated, default "100,20000"), COUNT_BATCHES (resolutions
 * per batch, comma-separated, default "1,6,30"), COUNT_VISITS (per measurement, default 30000),
 * COUNT_ROUNDS (default 3; the table shows medians), COUNT_CLASSES (kinds of visitor the visits
 * cycle through, default 1: one desktop visitor as bench:cpu's; 500 is closer to a public link's),
 * COUNT_STATS (`off,on` by default; `on` alone, say, to profile statistics with --cpu-prof).
 */
import { readFileSync } from 'node:fs';
import { openSqliteStore } from '../src/store/sqlite/store.ts';
import { hourOf, type Visit } from '../src/stats/visit.ts';
import { preloadSqlite } from './preload.ts';

const list = (text: string) => text.split(',').map(Number);
const LINKS = list(process.env.COUNT_LINKS ?? '100,20000');
const BATCHES = list(process.env.COUNT_BATCHES ?? '1,6,30');
const VISITS = Number(process.env.COUNT_VISITS ?? 30_000);
const ROUNDS = Number(process.env.COUNT_ROUNDS ?? 3);
const CLASSES = Number(process.env.COUNT_CLASSES ?? 1);
const STATS = (process.env.COUNT_STATS ?? 'off,on').split(',').map((mode) => mode === 'on');

/**
 * One desktop visitor's classes, the same for every visit (as bench:cpu's requests). Each
 * measurement with statistics has an hour of its own (the next one), so that the fold after it
 * finds an hour that is over, as it would an hour later.
 */
let visit: Visit = {
  hour: hourOf(Date.now()), bot: false, referrer: '(direct)', country: 'ZZ', browser: 'Chrome', os: 'Linux', device: 'desktop',
  key: 'bench',
};

/**
 * The kinds of visitor the visits cycle through (COUNT_CLASSES): referrer, country and browser
 * by coprime moduli, so the first 585 are all different.
 */
const COUNTRIES = ['ZZ', 'DE', 'US', 'FR', 'BR', 'JP', 'IN', 'GB', 'NG'];
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', 'Instagram'];
const visitorOf = (i: number): Visit => i === 0 ? visit : {
  ...visit, referrer: `site${i % 13}.example`, country: COUNTRIES[i % 9]!, browser: BROWSERS[i % 5]!,
};

/** Write and read system calls of this process so far (every thread). */
function syscalls(): { writes: number; reads: number } {
  const io = readFileSync('/proc/self/io', 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? Number.NaN);
  return { writes: field('syscw'), reads: field('syscr') };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

console.log(`SQLite count batch, ${VISITS} visits per measurement, medians of ${ROUNDS} rounds, ${CLASSES} kind(s) of visitor, Node ${process.version}`);
console.log('links    batch  statistics  CPU µs/visit  write calls/visit  read calls/visit  hour over µs/visit');
for (const links of LINKS) {
  const data = await preloadSqlite(links);
  const store = await openSqliteStore({ path: data.path });
  try {
    for (const batch of BATCHES) {
      for (const stats of STATS) {
        if (stats) visit = { ...visit, hour: visit.hour + 1 };
        const cpu: number[] = [];
        const writes: number[] = [];
        const reads: number[] = [];
        for (let round = 0; round <= ROUNDS; round++) {
          const calls0 = syscalls();
          const cpu0 = process.cpuUsage();
          for (let done = 0; done < VISITS; done += batch) {
            const group: Promise<unknown>[] = [];
            for (let i = 0; i < batch; i++) {
              const code = data.codes[Math.floor(Math.random() * links)]!;
              group.push(store.resolveLink(code, undefined, stats ? visitorOf((done + i) % CLASSES) : undefined));
            }
            await Promise.all(group);
          }
          const used = process.cpuUsage(cpu0);
          const calls = syscalls();
          if (round === 0) continue; // warm-up
          cpu.push((used.user + used.system) / VISITS);
          writes.push((calls.writes - calls0.writes) / VISITS);
          reads.push((calls.reads - calls0.reads) / VISITS);
        }
        // Then the hour is over: the folds that move its statistics on (ADR 29: from the links'
        // rows to the tuples, then to the rollups; before it, from the tuples to the rollups),
        // per visit of the rounds above.
        let hourOver = '–';
        if (stats) {
          const cpu0 = process.cpuUsage();
          while ((await store.foldStats({ hoursBefore: visit.hour + 1 })) > 0);
          const used = process.cpuUsage(cpu0);
          hourOver = ((used.user + used.system) / (VISITS * (ROUNDS + 1))).toFixed(1);
        }
        console.log(
          `${String(links).padEnd(8)} ${String(batch).padStart(5)}  ${(stats ? 'on' : 'off').padEnd(10)}  ` +
            `${median(cpu).toFixed(1).padStart(12)}  ${median(writes).toFixed(2).padStart(17)}  ${median(reads).toFixed(2).padStart(16)}  ${hourOver.padStart(19)}`,
        );
      }
    }
  } finally {
    await store.close();
    await data.remove();
  }
}
