// The shared helpers of the inventory collectors: limits (-1 -> +Inf, unit conversion), the
// newest point of a time series by parsed time, the destination label, and the HELP cadence.
import { describe, expect, it } from 'vitest';
import { cadenceNote, helpText, limitValue } from '../../../src/collectors/inventory/gauges.js';
import { polledIntervalMs } from '../../../src/collectors/poll-schedule.js';
import type { ExporterConfig } from '../../../src/config/index.js';
import { destinationLabel } from '../../../src/collectors/destination.js';
import { NewestPointReader, newestPoint } from '../../../src/collectors/inventory/series.js';
import { captureLogger } from '../../support/exporter-e2e-helpers.js';

describe('limitValue', () => {
  it('exports -1 (unlimited) as +Inf and converts other values exactly', () => {
    expect(limitValue(-1)).toBe(Number.POSITIVE_INFINITY);
    expect(limitValue(-1, 1000)).toBe(Number.POSITIVE_INFINITY);
    expect(limitValue(0)).toBe(0);
    expect(limitValue(2_147_483_647)).toBe(2_147_483_647);
    // 30 days in ms -> seconds, exactly (a division, not a multiplication by 0.001).
    expect(limitValue(2_592_000_000, 1000)).toBe(2_592_000);
    expect(limitValue(259_200_001, 1000)).toBe(259_200.001);
  });
});

describe('newestPoint', () => {
  it('picks the latest time, not the last array element, across timestamp layouts', () => {
    const points = [
      { x: '2025-10-23 17:36:00 +0000 UTC', y: 3 }, // newest, no fraction, first in the array
      { x: '2025-10-23 17:35:59.999999999 +0000 UTC', y: 2 },
      { x: '2025-10-23T17:34:00.123Z', y: 1 },
      { x: '2025-10-23 19:35:00.000 +0200 CEST', y: 9 }, // 17:35 UTC
    ];
    expect(newestPoint(points)).toEqual({ newest: { timeMs: Date.UTC(2025, 9, 23, 17, 36), value: 3 }, unreadable: 0 });
  });

  it('skips unreadable timestamps, counts them, and on equal times takes the later element', () => {
    const points = [
      { x: 'yesterday', y: 100 },
      { x: '2025-10-23 17:34:00 +0000 UTC', y: 1 },
      { x: '2025-10-23 17:34:00.000 +0000 UTC', y: 2 },
    ];
    expect(newestPoint(points)).toEqual({ newest: { timeMs: Date.UTC(2025, 9, 23, 17, 34), value: 2 }, unreadable: 1 });
    expect(newestPoint([{ x: 'nope', y: 1 }])).toEqual({ newest: undefined, unreadable: 1 });
    expect(newestPoint([])).toEqual({ newest: undefined, unreadable: 0 });
    expect(newestPoint(undefined)).toEqual({ newest: undefined, unreadable: 0 });
  });

  it('NewestPointReader warns once per series about unreadable timestamps', () => {
    const log = captureLogger('debug');
    const reader = new NewestPointReader();
    const bad = [
      { x: 'not a time', y: 1 },
      { x: '2025-10-23 17:34:00 +0000 UTC', y: 5 },
    ];
    expect(reader.newest(bad, 'data_size', log.logger)).toBe(5);
    expect(reader.newest(bad, 'data_size', log.logger)).toBe(5);
    expect(reader.newest(bad, 'vector_count', log.logger)).toBe(5);
    const warnings = log.lines().filter((l) => l.level === 'warn');
    expect(warnings.map((w) => w.series)).toEqual(['data_size', 'vector_count']);
    expect(warnings[0]).toMatchObject({ unreadable: 1, points: 2, sample: 'not a time' });
  });
});

describe('destinationLabel', () => {
  it('keeps host[:port] of a URL only: no path, query, credentials or default port', () => {
    expect(destinationLabel('https://api.example.com/hooks/a?token=s3cret')).toBe('api.example.com');
    expect(destinationLabel('http://127.0.0.1:4001/cron')).toBe('127.0.0.1:4001');
    expect(destinationLabel('https://user:pa55@hooks.example.com:8443/x')).toBe('hooks.example.com:8443');
    expect(destinationLabel('https://example.com:443/')).toBe('example.com');
    expect(destinationLabel('HTTP://[::1]:9000/p')).toBe('[::1]:9000');
  });

  it('keeps a URL Group name as it is', () => {
    expect(destinationLabel('nightly-jobs')).toBe('nightly-jobs');
    expect(destinationLabel('')).toBe('');
  });
});

describe('HELP text', () => {
  it('names the source and the effective interval of the collector', () => {
    expect(cadenceNote('vector', 60_000)).toBe(
      'Cached: polled every 1m by the vector collector, scrapes serve the last successful poll',
    );
    // 7 s cannot be scheduled exactly; the schedule rounds to 6 s and HELP says what really happens.
    const collectors = {
      schedules: { enabled: true, intervalMs: 7_000, disabledReason: null },
    } as ExporterConfig['collectors'];
    expect(cadenceNote('schedules', polledIntervalMs('schedules', { collectors }))).toContain(
      'polled every 6s by the schedules collector',
    );
    expect(helpText({ meaning: 'Vectors', source: 'x of GET /y' }, 'Cached.')).toBe(
      'Vectors. Source: x of GET /y. Cached.',
    );
  });
});
