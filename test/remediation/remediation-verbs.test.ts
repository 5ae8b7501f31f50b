// The pause the remediation webhook and the `pause-schedule` command share (pauseSchedules, over
// DeliveryClient.pauseSchedule) against a service that routes only PATCH (every SDK) or only
// POST (the OpenAPI). Purpose-built servers on 127.0.0.1: main's emulator accepts both verbs.
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import { pauseSchedules } from '../../src/remediation/index.js';
import { pathOf, sendJson, startServiceDouble, type ServiceDouble } from '../support/service-double.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const schedule = (scheduleId: string, isPaused: boolean) => ({
  scheduleId,
  cron: '*/5 * * * *',
  destination: 'https://example.com/cron',
  createdAt: 1_754_565_618_803,
  method: 'POST',
  isPaused,
});

async function scheduleService(verb: 'PATCH' | 'POST'): Promise<ServiceDouble> {
  const server = await startServiceDouble((req, res) => {
    if (req.method === 'GET' && pathOf(req) === '/v2/schedules')
      return sendJson(res, 200, [schedule('scd_run', false), schedule('scd_paused', true)]);
    if (req.method !== verb) return sendJson(res, 405, { error: 'method not allowed' });
    res.writeHead(200).end();
  });
  closers.push(() => server.close());
  return server;
}

describe('pauseSchedules over both schedule verbs', () => {
  for (const verb of ['PATCH', 'POST'] as const) {
    it(`pauses on a ${verb}-only service`, async () => {
      const server = await scheduleService(verb);
      const delivery = new DeliveryClient({ baseUrl: server.url, token: 'tok-remediation', retry: { maxRetries: 0 } });
      closers.push(() => delivery.close());
      const outcomes = await pauseSchedules(delivery, ['scd_run', 'scd_paused', 'scd_gone']);
      expect(outcomes).toEqual([
        { scheduleId: 'scd_run', result: 'paused' },
        { scheduleId: 'scd_paused', result: 'already_paused' },
        { scheduleId: 'scd_gone', result: 'not_found' },
      ]);
      const pauses = server.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.url}`);
      expect(pauses).toEqual(
        verb === 'PATCH'
          ? ['PATCH /v2/schedules/scd_run/pause']
          : ['PATCH /v2/schedules/scd_run/pause', 'POST /v2/schedules/scd_run/pause'],
      );
    });
  }
});
