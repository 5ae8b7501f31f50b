// The canary probe after the daily request limit: it stops until RateLimit-Reset instead of
// spending a request every interval. A purpose-built server answers the daily-limit 429 (the
// emulator of main has no daily-limit knob yet).
import { afterEach, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { ProbeMetrics } from '../../src/probe/metrics.js';
import { PendingProbes } from '../../src/probe/pending.js';
import { CanaryProbe } from '../../src/probe/runner.js';
import { captureLogger, eventually, sleep } from '../support/exporter-e2e-helpers.js';
import { sendJson, startServiceDouble, type ServiceDouble } from '../support/service-double.js';

let server: ServiceDouble | undefined;
let delivery: DeliveryClient | undefined;
afterEach(async () => {
  await delivery?.close();
  await server?.close();
});

it('after a daily-limit 429 the probe sends nothing until the limit resets', async () => {
  const reset = Math.floor(Date.now() / 1000) + 3600;
  server = await startServiceDouble((_req, res) =>
    sendJson(
      res,
      429,
      { error: 'daily ratelimit exceeded' },
      { 'RateLimit-Limit': '500', 'RateLimit-Remaining': '0', 'RateLimit-Reset': String(reset) },
    ),
  );
  delivery = new DeliveryClient({ baseUrl: server.url, token: 'tok-probe' });
  const captured = captureLogger('info');
  const { logger } = captured;
  const probe = new CanaryProbe({
    delivery,
    queue: 'probe',
    targets: [{ kind: 'message', url: 'http://127.0.0.1:1/probe' }],
    intervalMs: 20,
    timeoutMs: 1000,
    metrics: new ProbeMetrics(['message']),
    pending: new PendingProbes(),
    logger,
  });
  probe.start();
  await eventually(() =>
    captured.text().includes('daily request limit is reached') ? [] : ['no daily-limit log line yet'],
  );
  // Twenty-five intervals later, still the one request (a burst 429 would have been retried,
  // and the schedule would have probed again every 20 ms).
  await sleep(500);
  await probe.stop();
  expect(server.requests).toHaveLength(1);
  expect(captured.text()).toContain('ERR_API_DAILY_LIMIT');
});
