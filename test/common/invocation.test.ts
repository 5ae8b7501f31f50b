// The command printed to paste: `node dist/cli.js` only in a checkout of the repository; the
// installed command otherwise (it once said `node dist/cli.js run` in an installed package, where
// no dist/cli.js is at hand); and a listen address the printing program does not hold itself.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exporterCommand, pasteListenAddress } from '../../src/common/invocation.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A package folder: with `src/cli.ts` beside `dist/` (a checkout) or without (installed). */
function packageFolder(checkout: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'invocation-'));
  dirs.push(root);
  mkdirSync(join(root, 'dist'));
  writeFileSync(join(root, 'dist', 'cli.js'), '');
  if (checkout) {
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'cli.ts'), '');
  }
  return root;
}

describe('exporterCommand', () => {
  it('is `node dist/cli.js` in a checkout of the repository', () => {
    const root = packageFolder(true);
    expect(exporterCommand({ packageRoot: root, script: join(root, 'dist', 'cli.js') })).toBe('node dist/cli.js');
  });

  it('is the installed command when the program was started by it', () => {
    const root = packageFolder(false);
    expect(exporterCommand({ packageRoot: root, script: '/usr/local/bin/upstash-exporter' })).toBe('upstash-exporter');
  });

  it('is `npx upstash-exporter` for a package installed in a project and started another way', () => {
    const root = packageFolder(false);
    expect(exporterCommand({ packageRoot: root, script: join(root, 'dist', 'cli.js') })).toBe('npx upstash-exporter');
  });

  it('is `node dist/cli.js` for this checkout', () => {
    expect(exporterCommand()).toBe('node dist/cli.js');
  });
});

describe('pasteListenAddress', () => {
  it('keeps the preferred port unless the program listens there itself', () => {
    expect(pasteListenAddress(9825, [9824, 8787])).toBe('127.0.0.1:9825');
    expect(pasteListenAddress(9825, [9825, 8787])).toBe('127.0.0.1:9826');
    expect(pasteListenAddress(9825, [9825, 9826])).toBe('127.0.0.1:9827');
  });
});
