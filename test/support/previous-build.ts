// A build of an earlier commit of this repository, for tests that need what an older exporter
// wrote (a state file to take over). Made from the repository's own history (`git archive` of
// the commit's src and configuration, compiled with this checkout's TypeScript and
// node_modules), kept under tmp/ so later runs reuse it. MAIN_EXPORTER_CLI names a build to use
// instead. Null, with the reason, where the history is not there (a shallow clone, no git).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export type PreviousBuild = { cli: string; reason: null } | { cli: null; reason: string };

export function previousBuild(commit: string): PreviousBuild {
  const named = process.env.MAIN_EXPORTER_CLI;
  if (named !== undefined) return existsSync(named) ? { cli: named, reason: null } : missing(`${named} does not exist`);
  const dir = join(ROOT, 'tmp', 'previous-build', commit);
  const cli = join(dir, 'dist', 'cli.js');
  if (existsSync(cli)) return { cli, reason: null };
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    return missing(`commit ${commit} is not in this checkout's history (a shallow clone?)`);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  const archive = execFileSync('git', ['archive', '--format=tar', commit, ...files], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: dir,
      stdio: 'pipe',
    },
  );
  return existsSync(cli) ? { cli, reason: null } : missing(`building ${commit} left no dist/cli.js`);
}

function missing(reason: string): PreviousBuild {
  return { cli: null, reason };
}
