// The exporter's V8 flags (src/node-flags.ts) are the same in every way it is started: the
// shebang of the binary, the Docker image's CMD and `npm start`; and this Node accepts them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node-flags.js';

describe('node flags', () => {
  it('the shebang, the Dockerfile CMD and npm start pass NODE_FLAGS', () => {
    expect(NODE_FLAGS.length).toBeGreaterThan(0);
    const shebang = readFileSync('src/cli.ts', 'utf8').split('\n', 1)[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${NODE_FLAGS.join(' ')}`);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1];
    expect(JSON.parse(cmd ?? '[]')).toEqual(['node', ...NODE_FLAGS, 'dist/cli.js']);
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(`node ${NODE_FLAGS.join(' ')} dist/cli.js run`);
  });

  it('are accepted by this Node, also through NODE_OPTIONS', () => {
    expect(spawnSync(process.execPath, [...NODE_FLAGS, '-e', '0']).status).toBe(0);
    const viaEnv = spawnSync(process.execPath, ['-e', '0'], {
      env: { ...process.env, NODE_OPTIONS: NODE_FLAGS.join(' ') },
    });
    expect(viaEnv.status).toBe(0);
  });
});
