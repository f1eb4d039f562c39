/**
 * What every command shares: its streams and environment, the two kinds of failure (a usage
 * mistake exits 2, anything else 1), and argument parsing with `node:util` parseArgs plus
 * `--help` on every command.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Output {
  write(text: string): unknown;
}

export interface CliContext {
  readonly env: Env;
  readonly stdout: Output & NodeJS.WritableStream;
  readonly stderr: Output;
}

export const ExitCode = {
  Ok: 0,
  /** The command ran and failed: an error answer, a refused file, an unreachable database. */
  Failure: 1,
  /** The command line itself is wrong. */
  Usage: 2,
} as const;

/** A mistake in the command line; the message is followed by a pointer to `--help`. */
export class UsageError extends Error {
  readonly command: string;
  constructor(command: string, message: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/** A failure to report in one line, without a stack. */
export class CliFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliFailure';
  }
}

export interface Command {
  /** As typed: `shorten`, `account create`, `admin set-max-links`. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The whole `--help` text. */
  readonly help: string;
  run(args: readonly string[], context: CliContext): Promise<number>;
}

const CODE_ON_COMMAND_LINE = /^--(code|access-code|auth|accesscode)(=|$)/;

interface ParseSpec<O extends ParseArgsOptionsConfig> {
  readonly command: Command;
  readonly options: O;
  /** Names of the positional arguments, in order; a trailing `?` makes one optional. */
  readonly positionals: readonly string[];
}

type Parsed<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>;

/**
 * Parses a command's arguments. Returns undefined after printing the help when `--help`
 * was asked for.
 */
export function parseCommand<O extends ParseArgsOptionsConfig>(
  args: readonly string[],
  context: CliContext,
  spec: ParseSpec<O>,
): { values: Parsed<O>['values']; positionals: string[] } | undefined {
  const name = spec.command.name;
  for (const arg of args) {
    if (arg === '--') break;
    if (CODE_ON_COMMAND_LINE.test(arg)) {
      throw new UsageError(
        name,
        'access codes are never taken from the command line (any user can read it in the process list); ' +
          'set SHORTLINK_ACCESS_CODE or pass --code-file PATH',
      );
    }
  }
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { ...spec.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }) as Parsed<O>;
  } catch (error) {
    throw new UsageError(name, (error as Error).message.split('\n')[0]!);
  }
  if ((parsed.values as { help?: boolean }).help === true) {
    context.stdout.write(spec.command.help);
    return undefined;
  }
  const required = spec.positionals.filter((p) => !p.endsWith('?')).length;
  const wanted = spec.positionals.map((p) => p.replace(/\?$/, '').toUpperCase());
  if (parsed.positionals.length < required) {
    throw new UsageError(name, `missing ${wanted.slice(parsed.positionals.length, required).join(' and ')}`);
  }
  if (parsed.positionals.length > spec.positionals.length) {
    throw new UsageError(name, `unexpected argument ${JSON.stringify(parsed.positionals[spec.positionals.length])}`);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/** A non-negative whole number from the command line, or a usage error naming `what`. */
export function wholeNumber(command: Command, what: string, raw: string, min = 0): number {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new UsageError(command.name, `${what} must be a whole number${min > 0 ? ` ≥ ${min}` : ''}, got ${JSON.stringify(raw)}`);
  }
  return value;
}
