/**
 * The `shortlink` command's entry point: `node src/cli/main.ts <command> …` (Node 24), or the
 * `shortlink` bin (bin/shortlink.js), which finds Node 24 and runs this file.
 * The only place the CLI reads process.env and touches the process's exit status.
 */
import { runCli } from './run.ts';

process.exitCode = await runCli(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr });
