// Schedules under a time scale: they fire on their cron, nextScheduleTime / lastScheduleTime are
// the real instants, and pause keeps the next time while skipping that delivery. Also the cron
// walker itself (time zones, L and # forms).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CronSchedule } from '../../src/emulator/delivery/cron.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { allLogs, sdkClient, startDestination, waitFor, type Destination } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;
let target: Destination;

beforeAll(async () => {
  // A minute of cron time lasts 100 ms.
  emulator = await createEmulator({ knobs: { timeScale: 600 } });
  target = await startDestination();
});

afterEach(() => {
  emulator.reset();
  target.requests.length = 0;
});

afterAll(async () => {
  await target.close();
  await emulator.close();
});

describe('firing', () => {
  it('fires at nextScheduleTime and keeps lastScheduleTime and lastScheduleStates true', async () => {
    const client = sdkClient(emulator);
    // Every 3 minutes of cron time: 300 ms at time scale 600.
    const { scheduleId } = await client.schedules.create({
      destination: `${target.url}/tick`,
      cron: '*/3 * * * *',
      body: 'tick',
    });
    const [first] = await target.waitForRequests(1, 2000);
    const afterFirst = await client.schedules.get(scheduleId);
    const planned = afterFirst.nextScheduleTime!;
    expect(afterFirst.lastScheduleTime!).toBeLessThanOrEqual(first!.at);
    expect(planned).toBeGreaterThan(afterFirst.lastScheduleTime!);
    expect(planned - afterFirst.lastScheduleTime!).toBeLessThanOrEqual(302);
    expect(Object.keys(afterFirst.lastScheduleStates ?? {})).toEqual([String(first!.headers['upstash-message-id'])]);

    const [, second] = await target.waitForRequests(2, 2000);
    // Timers never fire early; under load they may fire a little late.
    expect(second!.at).toBeGreaterThanOrEqual(planned - 2);
    expect(second!.at - planned).toBeLessThan(250);
    const afterSecond = await client.schedules.get(scheduleId);
    expect(afterSecond.lastScheduleTime!).toBeGreaterThanOrEqual(planned - 2);
    expect(afterSecond.lastScheduleTime!).toBeLessThanOrEqual(second!.at);
    // The next time is a whole number of periods after the one that fired.
    const periods = (afterSecond.nextScheduleTime! - planned) / 300;
    expect(periods).toBeGreaterThanOrEqual(1);
    expect(Math.abs(periods - Math.round(periods))).toBeLessThan(0.02);
    const logs = await allLogs(emulator, { scheduleId });
    expect(logs.length).toBeGreaterThanOrEqual(2);
    expect(logs.every((entry) => entry.scheduleId === scheduleId)).toBe(true);
    await client.schedules.delete(scheduleId);
  });

  it('sends one message per endpoint for a URL Group schedule', async () => {
    const client = sdkClient(emulator);
    await client.urlGroups.addEndpoints({
      name: 'fan',
      endpoints: [{ url: `${target.url}/a` }, { url: `${target.url}/b` }],
    });
    const { scheduleId } = await client.schedules.create({ destination: 'fan', cron: '* * * * *' });
    await target.waitForRequests(2, 2000);
    await waitFor(async () => {
      const states = Object.values((await client.schedules.get(scheduleId)).lastScheduleStates ?? {});
      return states.length === 2 && states.every((state) => state === 'SUCCESS');
    }, 2000);
    expect((await client.schedules.get(scheduleId)).destination).toBe('fan');
  });

  it('pause keeps the next time, skips that delivery, and is idempotent; resume fires again', async () => {
    const client = sdkClient(emulator);
    const { scheduleId } = await client.schedules.create({ destination: `${target.url}/p`, cron: '* * * * *' });
    await target.waitForRequests(1, 2000);
    const before = await client.schedules.get(scheduleId);
    // POST (the interface) and PATCH (the SDK) both pause.
    const post = await fetch(`${emulator.url}/v2/schedules/${scheduleId}/pause`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emulator.credentials.token}` },
    });
    expect(post.status).toBe(200);
    await client.schedules.pause({ schedule: scheduleId });
    const paused = await client.schedules.get(scheduleId);
    expect(paused.isPaused).toBe(true);
    // The next delivery time did not move (unless the cron ticked in between).
    expect(
      [before.nextScheduleTime, before.nextScheduleTime! + 100].some(
        (time) => Math.abs(time! - paused.nextScheduleTime!) < 5,
      ),
    ).toBe(true);
    const count = target.requests.length;
    const lastTime = paused.lastScheduleTime;
    await waitFor(
      async () => (await client.schedules.get(scheduleId)).nextScheduleTime! > paused.nextScheduleTime! + 150,
      2000,
    );
    expect(target.requests.length).toBe(count);
    expect((await client.schedules.get(scheduleId)).lastScheduleTime).toBe(lastTime);

    await client.schedules.resume({ schedule: scheduleId });
    await client.schedules.resume({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(false);
    await target.waitForRequests(count + 1, 2000);
  });
});

describe('records', () => {
  it('redacts the body and headers of a schedule in its record while delivering the original', async () => {
    const response = await fetch(`${emulator.url}/v2/schedules/${target.url}/secret`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${emulator.credentials.token}`,
        'Upstash-Cron': '* * * * *',
        'Upstash-Redact-Fields': 'body,header',
        'Upstash-Forward-Api-Key': 'k-1',
        'Upstash-Schedule-Id': 'secret-schedule',
      },
      body: 'classified',
    });
    expect(response.status).toBe(200);
    const record = JSON.stringify(
      await (
        await fetch(`${emulator.url}/v2/schedules/secret-schedule`, {
          headers: { authorization: `Bearer ${emulator.credentials.token}` },
        })
      ).json(),
    );
    expect(record).toContain('"body":"REDACTED:');
    expect(record).toContain('"Api-Key":["REDACTED:');
    expect(record).not.toContain('classified');
    expect(record).not.toContain('k-1');
    const [request] = await target.waitForRequests(1, 2000);
    expect(request!.body).toBe('classified');
    expect(request!.headers['api-key']).toBe('k-1');
  });
});

describe('cron walker', () => {
  const at = (text: string): number => Date.parse(text);

  it('finds the next occurrence in UTC', () => {
    const cron = CronSchedule.parse('30 9 * * 1-5');
    try {
      // Friday 2025-01-03 10:00 UTC → Monday 2025-01-06 09:30 UTC.
      expect(new Date(cron.nextAfter(at('2025-01-03T10:00:00Z'))!).toISOString()).toBe('2025-01-06T09:30:00.000Z');
      expect(new Date(cron.nextAfter(at('2025-01-06T09:29:59Z'))!).toISOString()).toBe('2025-01-06T09:30:00.000Z');
      expect(new Date(cron.nextAfter(at('2025-01-06T09:30:00Z'))!).toISOString()).toBe('2025-01-07T09:30:00.000Z');
    } finally {
      cron.destroy();
    }
  });

  it('honours CRON_TZ, the last day of the month and the nth weekday', () => {
    const zoned = CronSchedule.parse('CRON_TZ=America/New_York 0 9 * * *');
    const last = CronSchedule.parse('0 0 L * *');
    const second = CronSchedule.parse('0 12 * * 1#2');
    try {
      expect(new Date(zoned.nextAfter(at('2025-07-01T00:00:00Z'))!).toISOString()).toBe('2025-07-01T13:00:00.000Z');
      expect(new Date(zoned.nextAfter(at('2025-01-01T00:00:00Z'))!).toISOString()).toBe('2025-01-01T14:00:00.000Z');
      expect(new Date(last.nextAfter(at('2024-02-10T00:00:00Z'))!).toISOString()).toBe('2024-02-29T00:00:00.000Z');
      expect(new Date(second.nextAfter(at('2025-03-01T00:00:00Z'))!).toISOString()).toBe('2025-03-10T12:00:00.000Z');
    } finally {
      zoned.destroy();
      last.destroy();
      second.destroy();
    }
  });

  it('rejects invalid expressions with a reason', () => {
    expect(() => CronSchedule.parse('')).toThrow(/empty/);
    expect(() => CronSchedule.parse('* * *')).toThrow(/5 fields/);
    expect(() => CronSchedule.parse('99 * * * *')).toThrow();
    expect(() => CronSchedule.parse('TZ=Nowhere/City * * * * *')).toThrow(/time zone/);
  });
});
