// The settings table declares each bound once, in the row's kind: the parser, the check of the
// loaded configuration and the help text all read it, so they cannot disagree (as the DLQ page
// cap once did: 10000 for the parser, none for the check).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, SETTINGS } from '../../src/config/index.js';

const TOKEN = { QSTASH_TOKEN: 'tok_rows_1' };

describe('bounds of the settings', () => {
  const bounded = SETTINGS.filter((row) => row.kind.range !== undefined);

  it('the rows with bounds include the page size, the parallel slices and the DLQ pages', () => {
    expect(bounded.map((row) => row.key)).toEqual(
      expect.arrayContaining(['logs.page_size', 'logs.parallel_slices', 'dlq.max_pages']),
    );
  });

  it.each(bounded.map((row) => [row.key, row] as const))(
    '%s: the parser and the check agree on the bounds',
    (_key, row) => {
      const [min, max] = row.kind.range!.split('-').map(Number) as [number, number];
      for (const inside of [min, max]) {
        expect(loadConfig(['--state-file', 'none', `--${row.flag}`, String(inside)], TOKEN)).toBeDefined();
        expect(row.kind.check.safeParse(inside).success, `check refuses ${inside}`).toBe(true);
      }
      for (const outside of [min - 1, max + 1]) {
        expect(() => loadConfig(['--state-file', 'none', `--${row.flag}`, String(outside)], TOKEN)).toThrow(
          ConfigError,
        );
        expect(row.kind.check.safeParse(outside).success, `check accepts ${outside}`).toBe(false);
      }
    },
  );

  it("the help text of a bounded setting that states its range states the kind's", () => {
    for (const row of bounded.filter((spec) => /\(\d+-\d+\)/.test(spec.help)))
      expect(row.help).toContain(`(${row.kind.range!})`);
  });
});
