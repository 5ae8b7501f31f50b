// Running the built exporter as another user (runuser, as root) for what only an unprivileged
// process meets: files it may not read or write. Root reads and writes everything, so these
// cases cannot be made as root.
//
// Skip-unless-CI: outside CI the suite is skipped with a message saying what is missing (not
// root, no runuser, or a node binary or checkout the user cannot reach); under CI=true it fails.
import { spawnSync } from 'node:child_process';
import { findOnPath } from './prometheus.js';

export interface OtherUser {
  user: string;
  /** A node binary the user can run (the test's own when it can). */
  node: string;
  /** Why the suite cannot run here, or null. */
  missing: string | null;
  /** Skip the suite: something is missing and CI is not set. */
  skip: boolean;
  /** Throws when something is missing (only reached under CI=true, where skip is false): call in beforeAll. */
  ensure(): void;
}

/** Whether `user` can run `node` and read each of `files` (checked by running node as that user). */
function reachable(user: string, node: string, files: readonly string[]): boolean {
  const script = `for (const f of ${JSON.stringify(files)}) require('node:fs').accessSync(f, require('node:fs').constants.R_OK)`;
  return spawnSync('runuser', ['-u', user, '--', node, '-e', script], { stdio: 'ignore', cwd: '/' }).status === 0;
}

/**
 * Looks up once, at import time of the test file, whether `user` can run the exporter: the tests
 * run as root, runuser is installed, and some node binary plus `files` (the built CLI, a
 * dependency) are readable by the user (a checkout under /root is not).
 */
export function otherUser(suite: string, user: string, files: readonly string[]): OtherUser {
  const inCi = process.env.CI === 'true';
  let missing: string | null = null;
  let node = process.execPath;
  if (process.getuid?.() !== 0) {
    missing = 'the tests do not run as root (runuser needs root)';
  } else if (findOnPath('runuser') === undefined) {
    missing = 'runuser is not installed (apt-get install util-linux)';
  } else {
    // The test's own node may sit where the user cannot reach it (npx's cache under /root, as in
    // the Node 24 pass of .ci/run); the system's node reads the same files the same way.
    const onPath = findOnPath('node');
    const candidates = [
      process.execPath,
      ...(onPath === undefined ? [] : [onPath]),
      '/usr/bin/node',
      '/usr/local/bin/node',
    ];
    const usable = candidates.find((candidate) => reachable(user, candidate, files));
    if (usable === undefined)
      missing = `user ${user} cannot run node or read ${files.join(', ')} (make the checkout readable by others: chmod o+rX on it and its parents)`;
    else node = usable;
  }
  if (missing !== null && !inCi) console.warn(`${suite}: skipped, ${missing}`);
  return {
    user,
    node,
    missing,
    skip: missing !== null && !inCi,
    ensure: () => {
      if (missing !== null) throw new Error(`CI=true: ${missing}`);
    },
  };
}
