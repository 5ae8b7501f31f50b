// docs/configuration.md is the user's reference (and the README copies its table): every
// setting of the code must have its row there, with the same names and default.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { COLLECTOR_NAMES, DEFAULT_POLL_INTERVALS, loadConfig, SETTINGS } from '../src/config/index.js';

const doc = readFileSync('docs/configuration.md', 'utf8');
const rows = doc.split('\n').filter((line) => line.startsWith('| `--'));

describe('docs/configuration.md', () => {
  it.each(SETTINGS.map((spec) => [spec.flag, spec] as const))('documents --%s', (_flag, spec) => {
    const row = rows.find((line) => line.startsWith(`| \`--${spec.flag}\``));
    expect(row, `no table row for --${spec.flag}`).toBeDefined();
    const cells = row!.split(' | ');
    expect(cells[1]).toContain(`\`${spec.env}\``);
    expect(cells[2]).toContain(spec.notInYaml === true ? '–' : `\`${spec.key}\``);
    expect(cells[3]).toContain(spec.defaultText);
    if (spec.secretFile === true) {
      expect(cells[0]).toContain(`\`--${spec.flag}-file\``);
      expect(cells[1]).toContain(`\`${spec.env}_FILE\``);
      expect(cells[2]).toContain(`\`${spec.key}_file\``);
    }
    if (spec.switch === true) expect(cells[0]).toContain(`\`--no-${spec.flag}\``);
  });

  it('has no row for a setting the code does not know', () => {
    const documented = rows.map((line) => /^\| `--([a-z-]+)`/.exec(line)?.[1]);
    expect(documented.sort()).toEqual(SETTINGS.map((spec) => spec.flag).sort());
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
