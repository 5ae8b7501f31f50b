// Optional endpoints a service may lack (src/collectors/optional-endpoint.ts): with the
// emulator's `/v2/workflows/*`, `/v2/globalParallelism`, `/v2/flowControl*` and management
// `/v2/qstash/stats*` answering 404 (knob absentEndpoints), the whole exporter stays ready, each
// endpoint is asked once, logged once and shown as upstash_exporter_endpoint_available 0, the
// queue gauges are still served, and the collectors left with nothing are unsupported (their
// summary says so), not failing. Then the asking again every 10 minutes, with a moved clock.
import { Gauge, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { QueuesCollector } from '../../src/collectors/queues.js';
import { ABSENT_RETRY_MS } from '../../src/collectors/optional-endpoint.js';
import { createEmulator, type EmulatorHandle, type Knobs } from '../../src/emulator/index.js';
import {
  captureLogger,
  eventually,
  familiesOf,
  sleep,
  startStack,
  valueOf,
  type Stack,
  collectorValue,
} from '../support/exporter-e2e-helpers.js';

let stack: Stack | undefined;
let emulator: EmulatorHandle | undefined;

afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await emulator?.close();
  emulator = undefined;
});

const ABSENT: Partial<Knobs> = { absentEndpoints: ['workflows', 'globalParallelism', 'flowControl', 'qstashStats'] };
const ENDPOINTS = [
  { collector: 'queues', endpoint: 'GET /v2/globalParallelism' },
  { collector: 'flow_control', endpoint: 'GET /v2/flowControl' },
  { collector: 'usage', endpoint: 'GET /v2/qstash/stats[/{id}]' },
  { collector: 'workflows', endpoint: 'GET /v2/workflows/events|logs' },
];

describe('a service without the optional endpoints', () => {
  it('keeps the exporter ready, each collector succeeding, the queues exported, each absence shown and logged once', async () => {
    stack = await startStack({ emulator: { knobs: { ...ABSENT } } });
    const upsert = await fetch(`${stack.emulator.url}/v2/queues/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.emulator.credentials.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ queueName: 'kept', parallelism: 2 }),
    });
    expect(upsert.status).toBe(200);
    // Several polls at 1 s.
    await sleep(4500);
    const families = await stack.scrape();
    // Each region's instance has its own series (the stack's one region: the SDKs' default).
    for (const endpoint of ENDPOINTS) {
      const labels = { ...endpoint, qstash_region: 'eu-central-1' };
      expect(valueOf(families, 'upstash_exporter_endpoint_available', labels), JSON.stringify(labels)).toBe(0);
    }
    for (const collector of ['queues', 'flow_control', 'usage', 'workflows', 'account']) {
      expect(collectorValue(families, 'upstash_exporter_collector_success', collector), collector).toBe(1);
      expect(collectorValue(families, 'upstash_exporter_collector_errors_total', collector), collector).toBe(0);
    }
    expect(
      valueOf(families, 'upstash_qstash_queue_parallelism', { queue: 'kept', qstash_region: 'eu-central-1' }),
    ).toBe(2);
    expect(families.has('upstash_qstash_global_parallelism_max')).toBe(false);
    // Asked once each in 4 s (again only after 10 minutes).
    expect(
      valueOf(families, 'upstash_exporter_api_requests_total', {
        api: 'qstash',
        endpoint: '/v2/globalParallelism',
        code: '404',
        qstash_region: 'eu-central-1',
      }),
    ).toBe(1);
    expect(
      valueOf(families, 'upstash_exporter_api_requests_total', {
        api: 'qstash',
        endpoint: '/v2/flowControl',
        code: '404',
        qstash_region: 'eu-central-1',
      }),
    ).toBe(1);

    const ready = await stack.get('/-/ready');
    expect(ready.status, ready.text).toBe(200);
    const landing = (await stack.get('/')).text;
    expect(landing).toMatch(/usage \(eu-central-1\)<\/td>.*unsupported: the service has no GET \/v2\/qstash\/stats/);
    expect(landing).toMatch(
      /workflows \(eu-central-1\)<\/td>.*unsupported: the service has no GET \/v2\/workflows\/events\|logs/,
    );
    expect(landing).not.toMatch(/queues \(eu-central-1\)<\/td>.*unsupported/);

    const warnings = stack.log.lines().filter((line) => line.level === 'warn' || line.level === 'error');
    const absences = warnings.filter((line) => String(line.msg).includes('does not have this endpoint'));
    expect(absences.map((line) => `${String(line.collector)} ${String(line.endpoint)}`).sort()).toEqual(
      ENDPOINTS.map((e) => `${e.collector} ${e.endpoint}`).sort(),
    );
    // No poll failed (a skipped overlapping poll on a loaded machine is not a failure).
    expect(warnings.filter((line) => String(line.msg).includes('poll failed'))).toEqual([]);
  });
});

describe('asking again', () => {
  it('leaves an absent endpoint alone for 10 minutes, then asks; once it answers its gauges come back and it says so', async () => {
    emulator = await createEmulator({ knobs: { absentEndpoints: ['globalParallelism'] } });
    const registry = new Registry();
    const gauge = new Gauge({
      name: 'upstash_exporter_endpoint_available',
      help: 'h',
      labelNames: ['collector', 'endpoint'] as const,
      registers: [registry],
    });
    const asked: string[] = [];
    const client = new DeliveryClient({
      baseUrl: emulator.url,
      token: emulator.credentials.token,
      retry: { maxRetries: 0 },
      onRequest: (r) => asked.push(`${r.endpoint} ${r.code}`),
    });
    const collector = new QueuesCollector({ client, intervalMs: 30_000, availability: gauge });
    const log = captureLogger();
    let now = Date.now();
    const poll = (): Promise<void> =>
      collector.poll({ signal: new AbortController().signal, now: () => now, logger: log.logger });
    const global = (): string[] => asked.filter((line) => line.startsWith('/v2/globalParallelism'));
    try {
      await poll();
      now += ABSENT_RETRY_MS - 1000;
      await poll();
      expect(global()).toEqual(['/v2/globalParallelism 404']);
      expect(valueOf(await familiesOf(registry), 'upstash_exporter_endpoint_available', ENDPOINTS[0])).toBe(0);
      now += 1000;
      await poll();
      expect(global()).toEqual(['/v2/globalParallelism 404', '/v2/globalParallelism 404']);
      // Still absent: not logged again.
      expect(log.lines().filter((line) => line.level === 'warn')).toHaveLength(1);

      emulator.setKnobs({ absentEndpoints: [] });
      now += ABSENT_RETRY_MS;
      await poll();
      expect(global().at(-1)).toBe('/v2/globalParallelism 200');
      expect(valueOf(await familiesOf(registry), 'upstash_exporter_endpoint_available', ENDPOINTS[0])).toBe(1);
      expect(valueOf(await familiesOf(collector.registry), 'upstash_qstash_global_parallelism_max')).toBeDefined();
      expect(log.text()).toContain('the endpoint answers again');
      // Answering: asked every poll.
      await poll();
      expect(global()).toHaveLength(4);
    } finally {
      await client.close();
    }
  });

  it('a failure that is not a 404 fails the poll as before', async () => {
    emulator = await createEmulator({ knobs: { faultScope: ['inventory'], failNext: 2 } });
    const client = new DeliveryClient({
      baseUrl: emulator.url,
      token: emulator.credentials.token,
      retry: { maxRetries: 0 },
    });
    const collector = new QueuesCollector({ client, intervalMs: 30_000 });
    try {
      await expect(
        collector.poll({ signal: new AbortController().signal, now: Date.now, logger: captureLogger().logger }),
      ).rejects.toMatchObject({ code: 'ERR_API_UPSTREAM' });
      await eventually(async () => {
        await collector.poll({ signal: new AbortController().signal, now: Date.now, logger: captureLogger().logger });
        return [];
      });
    } finally {
      await client.close();
    }
  });
});
