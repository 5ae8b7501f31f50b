// How a person starts this program again, as it was started now: from a checkout of the
// repository (`node dist/cli.js`), through the installed command (`upstash-exporter`), or from a
// package installed in a project (`npx upstash-exporter`). For the command lines printed to paste.
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own command (package.json `bin`). */
export const PACKAGE_COMMAND = 'upstash-exporter';

export interface Invocation {
  /** The script node runs (process.argv[1]). */
  script: string | undefined;
  /** The folder holding package.json and dist/. */
  packageRoot: string;
}

/** This process: dist/common/ sits two levels below the package root. */
export function currentInvocation(): Invocation {
  return { script: process.argv[1], packageRoot: fileURLToPath(new URL('../..', import.meta.url)) };
}

/**
 * The command that runs the exporter, as the person typed this one: `node dist/cli.js` in a
 * checkout of the repository (its TypeScript sources beside dist/), `upstash-exporter` when
 * started by that command, else `npx upstash-exporter` (a package installed in a project).
 */
export function exporterCommand(invocation: Invocation = currentInvocation()): string {
  if (existsSync(join(invocation.packageRoot, 'src', 'cli.ts'))) return 'node dist/cli.js';
  if (invocation.script !== undefined && basename(invocation.script) === PACKAGE_COMMAND) return PACKAGE_COMMAND;
  return `npx ${PACKAGE_COMMAND}`;
}

/**
 * The listen address of a printed command line: `127.0.0.1:<preferred>`, or the next port up
 * when the program that prints it listens there itself (pasted as is, it could not start).
 */
export function pasteListenAddress(preferred: number, ownPorts: readonly number[]): string {
  let port = preferred;
  while (ownPorts.includes(port)) port++;
  return `127.0.0.1:${port}`;
}
