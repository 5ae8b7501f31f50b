// deploy/compose/exporter.env.example, the file a Compose user copies: what each credential
// enables must be what the collector catalogue says (it once said the token enables only logs
// and schedules), and its commented settings must be accepted by the exporter as written.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_CATALOGUE, DEFAULT_POLL_INTERVALS } from '../../src/config/collector-catalogue.js';
import { loadConfig } from '../../src/config/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const text = readFileSync(join(ROOT, 'deploy/compose/exporter.env.example'), 'utf8');

/** The comment block just above a variable, joined into one line. */
function commentAbove(variable: string): string {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => line.startsWith(`${variable}=`));
  expect(at, `${variable}= in the example`).toBeGreaterThan(0);
  const comment: string[] = [];
  for (let i = at - 1; i >= 0 && lines[i]!.startsWith('#'); i--) comment.unshift(lines[i]!.replace(/^#\s?/, ''));
  return comment.join(' ');
}

/** The collector names a sentence lists after "enables the ... collectors". */
function enabledBy(sentence: string): string[] {
  const list = /enables the (.+?) collectors/.exec(sentence)?.[1] ?? '';
  return list
    .split(/,\s*|\s+and\s+/)
    .map((name) => name.trim())
    .filter((name) => name !== '')
    .sort();
}

describe('deploy/compose/exporter.env.example', () => {
  it('names every collector each credential enables, as the catalogue has it', () => {
    const needing = (needs: string): string[] =>
      COLLECTOR_CATALOGUE.filter((entry) => entry.needs === needs)
        .map((entry) => entry.name as string)
        .sort();
    expect(enabledBy(commentAbove('QSTASH_TOKEN'))).toEqual(needing('qstash'));
    expect(enabledBy(commentAbove('UPSTASH_EMAIL'))).toEqual(needing('management'));
  });

  it('shows the default poll interval of every collector, in a form the exporter accepts', () => {
    const line = /^# POLL_INTERVAL=(.*)$/m.exec(text)?.[1];
    expect(line).toBeDefined();
    const shown = Object.fromEntries(line!.split(',').map((pair) => pair.split('=') as [string, string]));
    expect(shown).toEqual(DEFAULT_POLL_INTERVALS);
    const config = loadConfig([], { QSTASH_TOKEN: 'example-token', POLL_INTERVAL: line! });
    expect(config.collectors.logs.intervalMs).toBe(15_000);
  });
});
