// The delivery client's schedule pause and resume against the emulator set to each side of the
// split evidence: PATCH only (what the SDKs send) and POST only (what the OpenAPI documents).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/api/delivery.js';
import type { RequestReport } from '../../src/api/http.js';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { sdkClient } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;

beforeAll(async () => {
  emulator = await createEmulator({});
});

afterAll(async () => {
  await emulator.close();
});

async function createSchedule(): Promise<string> {
  const response = await fetch(`${emulator.url}/v2/schedules/http://127.0.0.1:9/cron`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.credentials.token}`, 'Upstash-Cron': '0 0 1 1 *' },
  });
  return ((await response.json()) as { scheduleId: string }).scheduleId;
}

describe('schedule pause and resume verbs', () => {
  for (const verbs of ['patch', 'post'] as const) {
    it(`pauses and resumes where the service accepts ${verbs.toUpperCase()} only, asking PATCH first and keeping what answered`, async () => {
      emulator.setKnobs({ scheduleVerbs: verbs });
      const requests: RequestReport[] = [];
      const client = new DeliveryClient({
        baseUrl: emulator.url,
        token: emulator.credentials.token,
        onRequest: (report) => requests.push(report),
      });
      try {
        const id = await createSchedule();
        await client.pauseSchedule(id);
        expect((await sdkClient(emulator).schedules.get(id)).isPaused).toBe(true);
        await client.resumeSchedule(id);
        expect((await sdkClient(emulator).schedules.get(id)).isPaused).toBeFalsy();
        const calls = requests.map((request) => `${request.method} ${request.code}`);
        expect(calls).toEqual(verbs === 'patch' ? ['PATCH 200', 'PATCH 200'] : ['PATCH 405', 'POST 200', 'POST 200']);
      } finally {
        await client.close();
      }
    });
  }
});
