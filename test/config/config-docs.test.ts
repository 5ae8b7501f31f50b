// docs/configuration.md is the user's reference (and the README copies its table): its
// settings table is the one the settings rows write, names, defaults and help alike.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import {
  COLLECTOR_NAMES,
  DEFAULT_POLL_INTERVALS,
  loadConfig,
  SETTINGS,
  settingsTableMarkdown,
} from '../../src/config/index.js';

const doc = readFileSync('docs/configuration.md', 'utf8');
const rows = doc.split('\n').filter((line) => line.startsWith('| `--'));

describe('docs/configuration.md', () => {
  it('holds the settings table as the rows of the code write it (settingsTableMarkdown)', () => {
    const start = doc.indexOf('| flag | environment | YAML key | default | meaning |');
    expect(start, 'no settings table').toBeGreaterThan(-1);
    const end = doc.indexOf('\n\n', start);
    expect(doc.slice(start, end + 1)).toBe(settingsTableMarkdown());
  });

  it('has no setting row outside that table', () => {
    expect(rows).toHaveLength(SETTINGS.length);
  });

  it('states every default poll interval', () => {
    for (const name of COLLECTOR_NAMES) {
      expect(doc).toMatch(new RegExp(`\\| \`${name}\` \\|[^\\n]*\\| ${DEFAULT_POLL_INTERVALS[name]} \\|`));
    }
  });

  it('the example YAML file is a valid configuration', () => {
    const section = doc.slice(doc.indexOf('## The YAML file'));
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    // The example points at secret files and a state directory of a real host: swap them.
    const example = YAML.parse(block!) as Record<string, unknown>;
    delete example.qstash_token_file;
    delete example.upstash_api_key_file;
    example.state_file = 'none';
    const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-docs-'));
    try {
      const path = join(dir, 'example.yaml');
      writeFileSync(path, YAML.stringify(example));
      const config = loadConfig(['--config', path], { QSTASH_TOKEN: 'tok', UPSTASH_API_KEY: 'key' });
      expect(COLLECTOR_NAMES.every((name) => config.collectors[name].enabled)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
