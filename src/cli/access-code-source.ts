/**
 * Where the CLI finds the access code: a file named by `--code-file` (which only its owner may
 * read or write), else `SHORTLINK_ACCESS_CODE`. Never the command line: any user of the
 * machine can read another's arguments in the process list, and shells keep them in history.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { CliFailure, type Env } from './command.ts';

export const ACCESS_CODE_VARIABLE = 'SHORTLINK_ACCESS_CODE';

/** Reads the access code, or explains where it should have come from. */
export function readAccessCode(env: Env, codeFile: string | undefined): string {
  if (codeFile !== undefined) return readCodeFile(codeFile);
  const fromEnv = env[ACCESS_CODE_VARIABLE]?.trim();
  if (fromEnv) return fromEnv;
  throw new CliFailure(`no access code: set ${ACCESS_CODE_VARIABLE} or pass --code-file PATH (a file only you can read, mode 0600)`);
}

function readCodeFile(path: string): string {
  let fd: number;
  try {
    // Checked on the open descriptor, so the file cannot be swapped between check and read.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new CliFailure(`refusing the code file ${path}: it is a symbolic link`);
    throw new CliFailure(`cannot read the code file ${path} (${code ?? (error as Error).message})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new CliFailure(`refusing the code file ${path}: it is not a regular file`);
    const mode = stat.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new CliFailure(
        `refusing the code file ${path}: its mode is ${mode.toString(8).padStart(4, '0')}, so other users can ` +
          `read or change it; run "chmod 600 ${path}"`,
      );
    }
    const uid = process.getuid?.();
    if (uid !== undefined && uid !== 0 && stat.uid !== uid) {
      throw new CliFailure(`refusing the code file ${path}: it belongs to another user`);
    }
    const code = readFileSync(fd, 'utf8').trim();
    if (code === '') throw new CliFailure(`the code file ${path} is empty`);
    return code;
  } finally {
    closeSync(fd);
  }
}

export interface CodeFileSlot {
  write(code: string): void;
  /** Removes the (still empty) file when no code came. */
  abandon(): void;
}

/**
 * Creates the file for a new access code, mode 0600, before the account exists: a path that
 * is taken or unwritable then fails the command before a code is made that nobody could keep.
 */
export function reserveCodeFile(path: string): CodeFileSlot {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliFailure(`cannot save the access code to ${path}: ${code === 'EEXIST' ? 'the file already exists' : code ?? (error as Error).message}`);
  }
  return {
    write(code) {
      try {
        writeFileSync(fd, `${code}\n`);
      } finally {
        closeSync(fd);
      }
    },
    abandon() {
      closeSync(fd);
      rmSync(path, { force: true });
    },
  };
}
