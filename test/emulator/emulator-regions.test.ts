// Two QStash regions in one emulator, each at its own address: their messages, logs, tokens,
// signing keys and rate limits are their own; the account-wide management API lists one user per
// region (region spelt as the records spell it, its token, its plan) and serves each one's usage.
// The official SDK in multi-region migration mode (QSTASH_REGION, <REGION>_QSTASH_URL/_TOKEN)
// publishes into the region it names, and its Receiver verifies each region's deliveries with
// that region's own signing keys, picked by the Upstash-Region header.
import { Client, Receiver } from '@upstash/qstash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord, QStashStatsRecord } from '../../src/emulator/management/index.js';
import { DEV_CREDENTIALS, DEV_SIGNING_KEYS } from '../../src/emulator/index.js';
import {
  allLogs,
  sdkClient,
  startDestination,
  startRegions,
  waitFor,
  type Destination,
  type MultiRegionEmulator,
  type RecordedRequest,
} from '../support/emulator-helpers.js';

const EU = 'eu-central-1';
const US = 'us-east-1';

function basic(email: string, apiKey: string): string {
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}`;
}

/** Runs `body` with `env` in process.env (the SDK reads it there), restoring it afterwards. */
async function withEnvironment<T>(env: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    return await body();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('two regions in one emulator', () => {
  let multi: MultiRegionEmulator;
  let destination: Destination;

  beforeAll(async () => {
    multi = await startRegions([EU, US]);
    destination = await startDestination();
  });
  afterAll(async () => {
    await multi?.emulator.close();
    await destination?.close();
  });

  it('serves each region at its own address with its own token and signing keys', () => {
    const eu = multi.regions[EU]!;
    const us = multi.regions[US]!;
    expect(eu.url).not.toBe(us.url);
    // The first region keeps the single-region emulator's public development credentials.
    expect(eu.token).toBe(DEV_CREDENTIALS.token);
    expect(eu.signingKeys).toEqual(DEV_SIGNING_KEYS);
    expect(us.token).not.toBe(eu.token);
    expect(us.signingKeys.current).not.toBe(eu.signingKeys.current);
    expect(us.signingKeys.next).not.toBe(eu.signingKeys.next);
    expect(us.signingKeys.current).toMatch(/^sig_[A-Za-z0-9_-]{28}$/);
    expect(multi.emulator.url).toBe(eu.url);
    expect(multi.emulator.region(US).url).toBe(us.url);
  });

  it("keeps a message published in one region out of the other's logs and ground truth", async () => {
    const eu = multi.regions[EU]!;
    const us = multi.regions[US]!;
    const { messageId } = await sdkClient(eu).publish({ url: `${destination.url}/eu-only`, body: 'eu' });
    await waitFor(async () => (await allLogs(eu, { messageId })).some((entry) => entry.state === 'DELIVERED'));
    expect((await allLogs(eu)).filter((entry) => entry.messageId === messageId).length).toBeGreaterThan(0);
    expect((await allLogs(us)).filter((entry) => entry.messageId === messageId)).toEqual([]);
    expect(eu.handle.groundTruth().byState.DELIVERED).toBeGreaterThanOrEqual(1);
    expect(us.handle.groundTruth().total).toBe(0);
  });

  it("rejects one region's token in the other", async () => {
    const eu = multi.regions[EU]!;
    const us = multi.regions[US]!;
    const ask = (url: string, token: string) =>
      fetch(`${url}/v2/logs`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await ask(eu.url, eu.token)).toBe(200);
    expect(await ask(us.url, us.token)).toBe(200);
    expect(await ask(eu.url, us.token)).toBe(401);
    expect(await ask(us.url, eu.token)).toBe(401);
  });

  it('limits the rate of one region without touching the other', async () => {
    const eu = multi.regions[EU]!;
    const us = multi.regions[US]!;
    us.handle.setKnobs({ rateLimitPerSecond: 1 });
    try {
      const statuses = async (region: typeof eu) => {
        const answers: number[] = [];
        for (let i = 0; i < 4; i++)
          answers.push(
            (await fetch(`${region.url}/v2/logs`, { headers: { authorization: `Bearer ${region.token}` } })).status,
          );
        return answers;
      };
      expect(await statuses(us)).toContain(429);
      expect(await statuses(eu)).toEqual([200, 200, 200, 200]);
      expect(eu.handle.knobs().rateLimitPerSecond).toBe(0);
    } finally {
      us.handle.setKnobs({ rateLimitPerSecond: 0 });
    }
  });

  it("lists each region's user with its region, token and plan, and serves each one's usage apart", async () => {
    const eu = multi.regions[EU]!;
    const us = multi.regions[US]!;
    const billed = (region: typeof eu): number => {
      const { byState } = region.handle.groundTruth();
      return byState.CREATED + byState.RETRY;
    };
    const usBefore = billed(us);
    for (let i = 0; i < 3; i++) await sdkClient(us).publish({ url: `${destination.url}/us`, body: `us-${i}` });
    await waitFor(() => billed(us) >= usBefore + 3);
    const auth = { authorization: basic(eu.credentials.email, eu.credentials.apiKey) };
    // The management API is the account's: the same answer on every region's address.
    const lists = await Promise.all(
      [eu.url, us.url].map(async (url) => {
        const response = await fetch(`${url}/v2/qstash/users`, { headers: auth });
        expect(response.status).toBe(200);
        return (await response.json()) as AccountRecord[];
      }),
    );
    expect(lists[1]).toEqual(lists[0]);
    const users = lists[0]!;
    expect(users.map((user) => user.region)).toEqual([EU, US]);
    const [euUser, usUser] = users as [AccountRecord, AccountRecord];
    expect(euUser.token).toBe(eu.token);
    expect(usUser.token).toBe(us.token);
    expect(usUser.id).not.toBe(euUser.id);
    // Both on the plan given at start (payg by default): each its own limits record.
    expect(usUser.max_requests_per_day).toBe(euUser.max_requests_per_day);

    const today = (stats: QStashStatsRecord): number => {
      const day = new Date().getUTCDate();
      return stats.daily_requests[day - 1]!.y;
    };
    const statsOf = async (id: string) =>
      (await (await fetch(`${eu.url}/v2/qstash/stats/${id}`, { headers: auth })).json()) as QStashStatsRecord;
    const euStats = await statsOf(euUser.id);
    const usStats = await statsOf(usUser.id);
    // Each user's usage is its own region's billed requests, read from that region's log.
    expect(today(euStats)).toBe(billed(eu));
    expect(today(usStats)).toBe(billed(us));
    expect(today(usStats)).toBeGreaterThanOrEqual(3);
    expect(today(usStats)).not.toBe(today(euStats));
    // The legacy path serves the first region's user.
    const legacy = (await (await fetch(`${us.url}/v2/qstash/user`, { headers: auth })).json()) as AccountRecord;
    expect(legacy.id).toBe(euUser.id);
  });

  it("changes one region's plan (admin ?region=) without touching the other's", async () => {
    const eu = multi.regions[EU]!;
    const patched = await fetch(`${eu.url}/__emulator/management/account?region=${US}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'free' }),
    });
    expect(patched.status).toBe(200);
    try {
      const users = multi.emulator.management.usersFor('qstash');
      expect(users.find((user) => user.region === US)?.max_requests_per_day).toBe(1_000);
      expect(users.find((user) => user.region === EU)?.max_requests_per_day).not.toBe(1_000);
      expect(multi.emulator.management.currentPlan(US)).toBe('free');
      expect(multi.emulator.management.currentPlan(EU)).toBe('payg');
    } finally {
      multi.emulator.management.patchAccount({ plan: 'payg' }, US);
    }
  });
});

describe('the official SDK in multi-region migration mode', () => {
  let multi: MultiRegionEmulator;
  let destination: Destination;

  beforeAll(async () => {
    multi = await startRegions([EU, US]);
    destination = await startDestination();
  });
  afterAll(async () => {
    await multi?.emulator.close();
    await destination?.close();
  });

  async function publishWithEnvironment(publishTo: string, body: string): Promise<string> {
    return withEnvironment(multi.migrationEnvironment(publishTo), async () => {
      // No baseUrl or token: the SDK picks them from QSTASH_REGION and <REGION>_QSTASH_URL/_TOKEN.
      const client = new Client({ retry: false });
      return (await client.publish({ url: `${destination.url}/${publishTo}`, body })).messageId;
    });
  }

  it('publishes into the region QSTASH_REGION names', async () => {
    const toUs = await publishWithEnvironment(US, 'to-us');
    const toEu = await publishWithEnvironment(EU, 'to-eu');
    const idsIn = async (name: string) =>
      new Set((await allLogs(multi.regions[name]!)).map((entry) => String(entry.messageId)));
    await waitFor(async () => (await idsIn(US)).has(toUs) && (await idsIn(EU)).has(toEu));
    expect((await idsIn(US)).has(toEu)).toBe(false);
    expect((await idsIn(EU)).has(toUs)).toBe(false);
  });

  it("verifies each region's deliveries with that region's own signing keys (the Receiver reads the region header)", async () => {
    const before = destination.requests.length;
    await publishWithEnvironment(US, 'signed-us');
    await publishWithEnvironment(EU, 'signed-eu');
    await destination.waitForRequests(before + 2);
    const delivered = (body: string): RecordedRequest => destination.requests.find((request) => request.body === body)!;
    const verify = (request: RecordedRequest, receiver: Receiver) =>
      receiver.verify({
        signature: String(request.headers['upstash-signature']),
        body: request.body,
        url: `${destination.url}${request.url}`,
        upstashRegion: String(request.headers['upstash-region']),
      });
    const us = delivered('signed-us');
    const eu = delivered('signed-eu');
    expect(us.headers['upstash-region']).toBe('US-EAST-1');
    expect(eu.headers['upstash-region']).toBe('EU-CENTRAL-1');
    // The app's receiver as written for migration mode: no keys in code, all from the environment.
    await withEnvironment(multi.migrationEnvironment(US), async () => {
      expect(await verify(us, new Receiver())).toBe(true);
      expect(await verify(eu, new Receiver())).toBe(true);
    });
    // The keys really differ: the EU pair does not verify a US delivery.
    const euKeys = multi.regions[EU]!.signingKeys;
    await expect(
      verify(us, new Receiver({ currentSigningKey: euKeys.current, nextSigningKey: euKeys.next })),
    ).rejects.toThrow();
  });
});
