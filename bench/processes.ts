/** Starts a server script as a child process, pinned to a CPU, and finds its port. */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RunningProcess {
  readonly url: string;
  readonly pid: number;
  rssBytes(): number;
  /** CPU time (user + system) the process has used so far, in seconds; 0 when unknown. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

export async function startProcess(options: {
  script: string;
  cwd: string;
  env: Record<string, string>;
  cpu: number | undefined;
  /** Flags for node itself, before the script (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
}): Promise<RunningProcess> {
  const node = [process.execPath, ...(options.nodeArgs ?? []), options.script];
  const command = options.cpu === undefined ? node : ['taskset', '-c', String(options.cpu), ...node];
  // Request logging stays on (the default); lines go to a file, as under a process manager.
  const logDir = mkdtempSync(join(tmpdir(), 'shortlink-bench-log-'));
  const logFile = join(logDir, 'server.log');
  const fd = openSync(logFile, 'w');
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...options.env },
    stdio: ['ignore', fd, 'inherit'],
  });
  closeSync(fd);
  let exited = false;
  child.once('exit', () => (exited = true));
  let port = 0;
  for (let waited = 0; port === 0; waited += 20) {
    if (exited) throw new Error(`${options.script} exited during start`);
    if (waited > 30_000) throw new Error(`${options.script} did not start within 30 s`);
    await sleep(20);
    const match = /"port":(\d+)|listening at http:\/\/[^:"]+:(\d+)/i.exec(readFileSync(logFile, 'utf8'));
    if (match) port = Number(match[1] ?? match[2]);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    rssBytes() {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      } catch {
        return 0;
      }
    },
    cpuSeconds() {
      try {
        // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
        const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) / TICKS;
      } catch {
        return 0;
      }
    },
    stop() {
      return new Promise((resolve) => {
        const done = () => {
          rmSync(logDir, { recursive: true, force: true });
          resolve();
        };
        if (exited) return done();
        child.once('exit', done);
        child.kill('SIGTERM');
      });
    },
  };
}
