// A real Prometheus with `label_value_length_limit` scrapes the exporter while the emulator holds a
// schedule whose cron expression is 10 KB (created with the official SDK: the emulator accepts a
// list of 5,120 minutes). The exporter bounds the `cron` label (src/metrics/cardinality.ts), so
// the scrape succeeds and the series is queryable. The same Prometheus, scraping a plain server
// that serves one 10 KB label value unbounded, marks that target down: the limit is real, and
// without bounding the whole scrape of the exporter would be rejected the same way.
//
// Skipped with a message when the binaries are missing; under CI=true their absence fails.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundLabelValue, LABEL_VALUE_MAX_BYTES } from '../../src/metrics/cardinality.js';
import { CANARY, eventually, startStack, type Stack } from '../support/exporter-e2e-helpers.js';
import { requireBinaries, startPrometheusStack, type PrometheusStack } from '../support/prometheus.js';

const binaries = requireBinaries('e2e-label-bounds', ['prometheus', 'prometheus-alertmanager']);
/** Above what the exporter emits, far below 10 KB: what a cautious operator might configure. */
const LIMIT = LABEL_VALUE_MAX_BYTES + 44;
const LONG_CRON = `${Array.from({ length: 5_120 }, () => '0').join(',')} * * * *`;

interface Target {
  labels: Record<string, string>;
  health: string;
  lastError: string;
}

describe.skipIf(binaries.skip)(
  `label values bounded for a real Prometheus with label_value_length_limit${binaries.needs}`,
  () => {
    let stack: Stack | undefined;
    let prometheus: PrometheusStack | undefined;
    let unbounded: Server | undefined;
    let scheduleId = '';

    beforeAll(async () => {
      binaries.ensure();
      stack = await startStack();
      const sdk = new Client({ baseUrl: stack.emulator.url, token: CANARY.token, retry: false });
      ({ scheduleId } = await sdk.schedules.create({ destination: 'http://127.0.0.1:9/never', cron: LONG_CRON }));

      unbounded = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end(`# TYPE unbounded_info gauge\nunbounded_info{cron="${LONG_CRON}"} 1\n`);
      });
      await new Promise<void>((resolve) => unbounded!.listen(0, '127.0.0.1', resolve));

      prometheus = await startPrometheusStack({
        name: 'upstash-exporter-label-bounds',
        rules: { content: 'groups: []\n' },
        job: 'upstash-exporter',
        target: new URL(stack.exporter.url).host,
        scrapeSettings: { label_value_length_limit: LIMIT },
        extraScrapeConfigs: [
          {
            job_name: 'unbounded',
            label_value_length_limit: LIMIT,
            static_configs: [{ targets: [`127.0.0.1:${(unbounded.address() as AddressInfo).port}`] }],
          },
        ],
        alertmanagerConfig: { route: { receiver: 'none' }, receivers: [{ name: 'none' }] },
      });
    }, 45_000);

    afterAll(async () => {
      await prometheus?.close();
      await stack?.close();
      if (unbounded) await new Promise<void>((resolve) => unbounded!.close(() => resolve()));
    });

    it('scrapes the exporter (the 10 KB cron bounded, the cut counted) and rejects the unbounded target', async () => {
      expect(LONG_CRON.length).toBeGreaterThan(10_000);
      const url = prometheus!.prometheusUrl;
      const targets = async (): Promise<Target[]> =>
        ((await (await fetch(`${url}/api/v1/targets`)).json()) as { data: { activeTargets: Target[] } }).data
          .activeTargets;
      const query = async (expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
        const answer = (await (
          await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr }).toString()}`)
        ).json()) as {
          data: { result: { metric: Record<string, string>; value: [number, string] }[] };
        };
        return answer.data.result;
      };

      await eventually(async () => {
        prometheus!.assertRunning();
        const all = await targets().catch(() => []);
        const exporter = all.find((target) => target.labels.job === 'upstash-exporter');
        const raw = all.find((target) => target.labels.job === 'unbounded');
        const series = await query(`upstash_qstash_schedule_info{schedule_id="${scheduleId}"}`).catch(() => []);
        const problems: string[] = [];
        if (exporter?.health !== 'up')
          problems.push(`exporter target ${exporter?.health ?? 'absent'}: ${exporter?.lastError ?? ''}`);
        if (raw?.health !== 'down') problems.push(`unbounded target ${raw?.health ?? 'absent'}`);
        if (series.length !== 1) problems.push(`schedule_info series: ${series.length}`);
        return problems;
      }, 40_000);

      const raw = (await targets()).find((target) => target.labels.job === 'unbounded')!;
      expect(raw.lastError).toMatch(/label_value_length_limit exceeded/);
      const [info] = await query(`upstash_qstash_schedule_info{schedule_id="${scheduleId}"}`);
      expect(info!.metric.cron).toBe(boundLabelValue(LONG_CRON));
      expect(Buffer.byteLength(info!.metric.cron!)).toBeLessThanOrEqual(LABEL_VALUE_MAX_BYTES);
      const [cut] = await query('upstash_exporter_label_values_truncated_total{metric="upstash_qstash_schedule_info"}');
      expect(Number(cut!.value[1])).toBeGreaterThanOrEqual(1);
    }, 60_000);
  },
);
