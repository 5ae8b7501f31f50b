// Delivery semantics of the emulator, against real destinations on 127.0.0.1: retries and
// retry-delay timing under a time scale, the default backoff, destination hints (Retry-After,
// 489 non-retryable), timeouts, callbacks and failure callbacks, de-duplication, redaction,
// delays, the workflow trigger, plan defaults, the header prefix and the raw destination.
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { allLogs, startDestination, statesOf, waitFor, type Destination } from '../support/emulator-helpers.js';

let emulator: EmulatorHandle;
const destinations: Destination[] = [];

async function destination(...args: Parameters<typeof startDestination>): Promise<Destination> {
  const started = await startDestination(...args);
  destinations.push(started);
  return started;
}

beforeAll(async () => {
  emulator = await createEmulator({ plan: 'free', knobs: { timeScale: 10 } });
});

afterEach(async () => {
  emulator.reset();
  emulator.setKnobs({ timeScale: 10 });
  await Promise.all(destinations.splice(0).map((item) => item.close()));
});

afterAll(async () => {
  await emulator.close();
});

async function publish(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.credentials.token}`, ...headers },
    body,
  });
}

async function publishOk(
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ messageId: string; deduplicated?: boolean }> {
  const response = await publish(path, body, headers);
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as { messageId: string; deduplicated?: boolean };
}

async function finalStates(messageId: string): Promise<string[]> {
  await waitFor(
    async () => {
      const states = await statesOf(emulator, messageId);
      return states.includes('DELIVERED') || states.includes('FAILED');
    },
    8000,
    `message ${messageId} to finish`,
  );
  return statesOf(emulator, messageId);
}

describe('retries', () => {
  it('makes 1 + retries attempts, with the retry-delay expression timing them (time scale 10)', async () => {
    const target = await destination(() => ({ status: 500, body: 'boom', headers: { 'x-reason': 'overload' } }));
    const { messageId } = await publishOk(`/v2/publish/${target.url}/fail`, 'x', {
      'Upstash-Retries': '2',
      'Upstash-Retry-Delay': '1000 * (1 + retried)',
    });
    expect(await finalStates(messageId)).toEqual([
      'CREATED',
      'ACTIVE',
      'ERROR',
      'RETRY',
      'ACTIVE',
      'ERROR',
      'RETRY',
      'ACTIVE',
      'ERROR',
      'FAILED',
    ]);
    expect(target.requests.map((request) => request.headers['upstash-retried'])).toEqual(['0', '1', '2']);
    // 1000 ms then 2000 ms of virtual time: 100 ms and 200 ms at time scale 10.
    const gaps = [target.requests[1]!.at - target.requests[0]!.at, target.requests[2]!.at - target.requests[1]!.at];
    expect(gaps[0]).toBeGreaterThanOrEqual(95);
    expect(gaps[0]).toBeLessThan(250);
    expect(gaps[1]).toBeGreaterThanOrEqual(195);
    expect(gaps[1]).toBeLessThan(450);

    const entries = (await allLogs(emulator, { messageId })).reverse();
    const errors = entries.filter((entry) => entry.state === 'ERROR');
    expect(
      errors.every((entry) => entry.responseStatus === 500 && entry.error === 'destination answered HTTP 500'),
    ).toBe(true);
    expect(Buffer.from(String(errors[0]!.responseBody), 'base64').toString()).toBe('boom');
    // Response header names are recorded in canonical form.
    expect((errors[0]!.responseHeaders as Record<string, string[]>)['X-Reason']).toEqual(['overload']);
    const retries = entries.filter((entry) => entry.state === 'RETRY');
    expect(retries.every((entry) => typeof entry.nextDeliveryTime === 'number')).toBe(true);
    expect(Number(retries[0]!.nextDeliveryTime) - Number(retries[0]!.time)).toBeGreaterThanOrEqual(99);
    expect(
      entries.every((entry) => entry.maxRetries === 2 && entry.retryDelayExpression === '1000 * (1 + retried)'),
    ).toBe(true);
  });

  it('uses the default backoff min(86400, e^(2.5n)) s and the plan default retries (free plan: 3)', async () => {
    emulator.setKnobs({ timeScale: 1000 });
    const target = await destination((_request, index) => ({ status: index < 2 ? 503 : 200 }));
    const { messageId } = await publishOk(`/v2/publish/${target.url}/flaky`, 'x');
    expect(await finalStates(messageId)).toEqual([
      'CREATED',
      'ACTIVE',
      'ERROR',
      'RETRY',
      'ACTIVE',
      'ERROR',
      'RETRY',
      'ACTIVE',
      'DELIVERED',
    ]);
    const gaps = [target.requests[1]!.at - target.requests[0]!.at, target.requests[2]!.at - target.requests[1]!.at];
    // e^2.5 s = 12.2 s and e^5 s = 148.4 s, a thousand times faster.
    expect(gaps[0]).toBeGreaterThanOrEqual(11);
    expect(gaps[1]).toBeGreaterThanOrEqual(147);
    expect(gaps[1]).toBeLessThan(400);
    const created = (await allLogs(emulator, { messageId, state: 'CREATED' }))[0]!;
    expect(created.maxRetries).toBe(3);
  });

  it('follows Retry-After from the destination', async () => {
    const target = await destination((_request, index) =>
      index === 0 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 },
    );
    const { messageId } = await publishOk(`/v2/publish/${target.url}/limited`, 'x', {
      'Upstash-Retries': '1',
      'Upstash-Retry-Delay': '0',
    });
    expect(await finalStates(messageId)).toContain('DELIVERED');
    // Retry-After 2 s wins over the expression: 200 ms at time scale 10.
    expect(target.requests[1]!.at - target.requests[0]!.at).toBeGreaterThanOrEqual(195);
  });

  it('fails at once on 489 with Upstash-NonRetryable-Error: true', async () => {
    const target = await destination(() => ({
      status: 489,
      headers: { 'Upstash-NonRetryable-Error': 'true' },
      body: 'no',
    }));
    const { messageId } = await publishOk(`/v2/publish/${target.url}/x`, 'x', { 'Upstash-Retries': '5' });
    expect(await finalStates(messageId)).toEqual(['CREATED', 'ACTIVE', 'ERROR', 'FAILED']);
    expect(target.requests).toHaveLength(1);
  });

  it('honours Upstash-Timeout (compound values accepted) and records a timeout error', async () => {
    const target = await destination(() => ({ status: 200, delayMs: 1500 }));
    const { messageId } = await publishOk(`/v2/publish/${target.url}/slow`, 'x', {
      'Upstash-Timeout': '1s',
      'Upstash-Retries': '0',
    });
    expect(await finalStates(messageId)).toEqual(['CREATED', 'ACTIVE', 'ERROR', 'FAILED']);
    const [error] = await allLogs(emulator, { messageId, state: 'ERROR' });
    expect(error!.error).toBe('timeout: no response within 1000ms');
    expect(error!.responseStatus).toBeUndefined();
    expect(error!.timeout).toBe(1000);

    const compound = await publishOk(`/v2/publish/${target.url}/slow`, 'x', {
      'Upstash-Timeout': '1m30s',
      'Upstash-Retries': '0',
    });
    const [created] = await allLogs(emulator, { messageId: compound.messageId, state: 'CREATED' });
    expect(created!.timeout).toBe(90_000);
    // The header only shortens the plan's limit (free plan: 15 minutes).
    const long = await publishOk(`/v2/publish/${target.url}/slow`, 'x', {
      'Upstash-Timeout': '2h',
      'Upstash-Retries': '0',
    });
    expect((await allLogs(emulator, { messageId: long.messageId, state: 'CREATED' }))[0]!.timeout).toBe(15 * 60_000);
  });

  it('records connection failures and refuses non-loopback destinations', async () => {
    const closed = await destination();
    const url = closed.url;
    await closed.close();
    destinations.splice(destinations.indexOf(closed), 1);
    const refused = await publishOk(`/v2/publish/${url}/gone`, 'x', { 'Upstash-Retries': '0' });
    await finalStates(refused.messageId);
    expect((await allLogs(emulator, { messageId: refused.messageId, state: 'ERROR' }))[0]!.error).toBe(
      'connection failed: ECONNREFUSED',
    );

    const remote = await publishOk('/v2/publish/https://example.com/hook', 'x', { 'Upstash-Retries': '3' });
    expect(await finalStates(remote.messageId)).toEqual(['CREATED', 'ACTIVE', 'ERROR', 'FAILED']);
    expect((await allLogs(emulator, { messageId: remote.messageId, state: 'FAILED' }))[0]!.error).toBe(
      'destination not allowed by emulator',
    );
  });
});

describe('load', () => {
  it('delivers thousands of messages with at most `concurrency` attempts in flight', async () => {
    const bounded = await createEmulator({ concurrency: 16 });
    try {
      const target = await destination(() => ({ status: 200, delayMs: 2 }));
      const total = 2000;
      for (let start = 0; start < total; start += 100) {
        await Promise.all(
          Array.from({ length: 100 }, (_, offset) =>
            fetch(`${bounded.url}/v2/publish/${target.url}/load/${start + offset}`, {
              method: 'POST',
              headers: { authorization: `Bearer ${bounded.credentials.token}` },
              body: 'x',
            }).then((response) => {
              expect(response.status).toBe(200);
            }),
          ),
        );
      }
      await waitFor(() => bounded.groundTruth().byState.DELIVERED === total, 20_000, 'every message delivered');
      expect(bounded.groundTruth()).toMatchObject({
        total: 3 * total,
        byState: { CREATED: total, ACTIVE: total, DELIVERED: total, ERROR: 0 },
      });
      expect(target.requests).toHaveLength(total);
      expect(target.maxInFlight()).toBeLessThanOrEqual(16);
      expect(target.maxInFlight()).toBeGreaterThan(1);
    } finally {
      await bounded.close();
    }
  });
});

describe('callbacks', () => {
  it('calls the callback after a successful delivery, with the service body and its own forward headers', async () => {
    const target = await destination(() => ({ status: 201, body: 'created!', headers: { 'X-Answer': '42' } }));
    const callback = await destination();
    const { messageId } = await publishOk(`/v2/publish/${target.url}/ok`, 'source-body', {
      'Upstash-Callback': `${callback.url}/cb`,
      'Upstash-Callback-Forward-X-Cb': 'cb-header',
      'Upstash-Callback-Method': 'PUT',
      'Content-Type': 'text/plain',
    });
    const [request] = await callback.waitForRequests(1);
    expect(request!.method).toBe('PUT');
    expect(request!.headers['x-cb']).toBe('cb-header');
    const payload = JSON.parse(request!.body) as Record<string, unknown>;
    expect(payload).toMatchObject({
      status: 201,
      retried: 0,
      sourceMessageId: messageId,
      url: `${target.url}/ok`,
      method: 'POST',
    });
    expect(Buffer.from(String(payload.body), 'base64').toString()).toBe('created!');
    expect(Buffer.from(String(payload.sourceBody), 'base64').toString()).toBe('source-body');
    expect((payload.header as Record<string, string[]>)['X-Answer']).toEqual(['42']);
    expect(payload.dlqId).toBeUndefined();
    // The callback is a message of its own, logged too.
    await waitFor(() => emulator.groundTruth().byState.DELIVERED === 2);
  });

  it('calls the callback after each failed attempt, and the failure callback once, after the last retry', async () => {
    const target = await destination(() => ({ status: 500 }));
    const callback = await destination();
    const failure = await destination();
    const { messageId } = await publishOk(`/v2/publish/${target.url}/bad`, 'x', {
      'Upstash-Retries': '2',
      'Upstash-Retry-Delay': '100',
      'Upstash-Callback': `${callback.url}/cb`,
      'Upstash-Failure-Callback': `${failure.url}/failed`,
      'Upstash-Failure-Callback-Forward-X-Why': 'dlq',
    });
    await finalStates(messageId);
    await callback.waitForRequests(3);
    const [failed] = await failure.waitForRequests(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(failure.requests).toHaveLength(1);
    expect(failed!.at).toBeGreaterThanOrEqual(target.requests[2]!.at);
    expect(failed!.headers['x-why']).toBe('dlq');
    const payload = JSON.parse(failed!.body) as Record<string, unknown>;
    expect(payload).toMatchObject({ status: 500, retried: 2, maxRetries: 2, sourceMessageId: messageId });
    expect(typeof payload.dlqId).toBe('string');
    expect(callback.requests.map((request) => (JSON.parse(request.body) as { retried: number }).retried)).toEqual([
      0, 1, 2,
    ]);
  });

  it('sends no failure callback when a retry succeeds', async () => {
    const target = await destination((_request, index) => ({ status: index === 0 ? 500 : 200 }));
    const failure = await destination();
    const { messageId } = await publishOk(`/v2/publish/${target.url}/x`, 'x', {
      'Upstash-Retries': '1',
      'Upstash-Retry-Delay': '10',
      'Upstash-Failure-Callback': `${failure.url}/failed`,
    });
    expect(await finalStates(messageId)).toContain('DELIVERED');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(failure.requests).toHaveLength(0);
  });
});

describe('de-duplication', () => {
  it('ignores a duplicate id within the window and accepts it after (window shortened by the time scale)', async () => {
    emulator.setKnobs({ timeScale: 2000 }); // 10 minutes last 300 ms
    const target = await destination();
    const first = await publishOk(`/v2/publish/${target.url}/d`, 'a', { 'Upstash-Deduplication-Id': 'order-1' });
    const second = await publish(`/v2/publish/${target.url}/d`, 'b', { 'Upstash-Deduplication-Id': 'order-1' });
    expect(second.status).toBe(202);
    expect(await second.json()).toEqual({ messageId: first.messageId, url: `${target.url}/d`, deduplicated: true });
    await new Promise((resolve) => setTimeout(resolve, 350));
    const third = await publishOk(`/v2/publish/${target.url}/d`, 'c', { 'Upstash-Deduplication-Id': 'order-1' });
    expect(third.messageId).not.toBe(first.messageId);
    expect(third.deduplicated).toBeUndefined();
    await target.waitForRequests(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(target.requests.map((request) => request.body)).toEqual(['a', 'c']);
  });

  it('de-duplicates by content: same body and headers to the same URL; a different body passes', async () => {
    const target = await destination();
    const headers = { 'Upstash-Content-Based-Deduplication': 'true', 'Content-Type': 'text/plain' };
    const first = await publishOk(`/v2/publish/${target.url}/c`, 'same', headers);
    const again = await publishOk(`/v2/publish/${target.url}/c`, 'same', headers);
    expect(again).toEqual({ messageId: first.messageId, url: `${target.url}/c`, deduplicated: true });
    const other = await publishOk(`/v2/publish/${target.url}/c`, 'different', headers);
    expect(other.messageId).not.toBe(first.messageId);
    const otherUrl = await publishOk(`/v2/publish/${target.url}/elsewhere`, 'same', headers);
    expect(otherUrl.deduplicated).toBeUndefined();
    expect(emulator.groundTruth().byState.CREATED).toBe(3);
  });
});

describe('redaction', () => {
  it('shows REDACTED:<sha256> in every record while the destination gets the original', async () => {
    const target = await destination(() => ({ status: 500 }));
    const callback = await destination();
    const { messageId } = await publishOk(`/v2/publish/${target.url}/secret`, 'top-secret-body', {
      'Upstash-Redact-Fields': 'body,header[Authorization-Key]',
      'Upstash-Forward-Authorization-Key': 'key-123',
      'Upstash-Forward-Visible': 'fine',
      'Upstash-Retries': '0',
      'Upstash-Failure-Callback': `${callback.url}/f`,
    });
    const [request] = await target.waitForRequests(1);
    expect(request!.body).toBe('top-secret-body');
    expect(request!.headers['authorization-key']).toBe('key-123');
    await callback.waitForRequests(1);
    await waitFor(() => emulator.groundTruth().byState.DELIVERED === 1);

    const records =
      JSON.stringify(await allLogs(emulator)) + JSON.stringify(callback.requests.map((item) => item.body));
    expect(records).not.toContain('top-secret-body');
    expect(records).not.toContain(Buffer.from('top-secret-body').toString('base64'));
    expect(records).not.toContain('key-123');
    const entry = (await allLogs(emulator, { messageId }))[0]!;
    expect(entry.body).toBe(`REDACTED:${sha256('top-secret-body')}`);
    expect(entry.header).toMatchObject({ 'Authorization-Key': [`REDACTED:${sha256('key-123')}`], Visible: ['fine'] });
  });
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('delays, trigger, prefix and the raw destination', () => {
  it('waits Upstash-Delay and Upstash-Not-Before (scaled), and keeps the destination query string', async () => {
    emulator.setKnobs({ timeScale: 20 });
    const target = await destination();
    const started = Date.now();
    await publishOk(`/v2/publish/${target.url}/later?a=1&b=two&qstash_token=${emulator.credentials.token}`, 'x', {
      'Upstash-Delay': '4s',
    });
    const [request] = await target.waitForRequests(1);
    expect(request!.url).toBe('/later?a=1&b=two');
    expect(request!.at - started).toBeGreaterThanOrEqual(190);

    const notBefore = Math.floor(Date.now() / 1000) + 6; // 5 to 6 s away: 250 to 300 ms at scale 20
    const before = Date.now();
    await publishOk(`/v2/publish/${target.url}/nb`, 'x', {
      'Upstash-Not-Before': String(notBefore),
      'Upstash-Delay': '1h',
    });
    await target.waitForRequests(2, 3000);
    expect(target.requests[1]!.at - before).toBeGreaterThanOrEqual(240);
    expect(target.requests[1]!.at - before).toBeLessThan(1500);
  });

  it('triggers a workflow run: run id header, labels and flow control recorded, ms timestamps', async () => {
    const target = await destination();
    const response = await publish(`/v2/trigger/${target.url}/workflow`, '{"input":1}', {
      'Upstash-Workflow-RunId': 'wfr_custom',
      'Upstash-Label': 'wf',
      'Upstash-Flow-Control-Key': 'tenant-1',
      'Upstash-Flow-Control-Value': 'parallelism=2, rate=10, period=1m',
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { workflowRunId: string; workflowCreatedAt: number };
    expect(body.workflowRunId).toBe('wfr_custom');
    expect(Math.abs(body.workflowCreatedAt - Date.now())).toBeLessThan(5000);
    const [request] = await target.waitForRequests(1);
    expect(request!.headers['upstash-workflow-runid']).toBe('wfr_custom');
    const [created] = await allLogs(emulator, { label: 'wf', state: 'CREATED' });
    expect(created).toMatchObject({
      workflowRunId: 'wfr_custom',
      flowControlKey: 'tenant-1',
      parallelism: 2,
      rate: 10,
      period: 60,
      maxRetries: 3,
    });

    const generated = (await (await publish(`/v2/trigger/${target.url}/workflow`, '{}')).json()) as {
      workflowRunId: string;
    };
    expect(generated.workflowRunId).toMatch(/^wfr_/);
  });

  it('reads the configured header prefix (Svc-) instead of Upstash-', async () => {
    const svc = await createEmulator({ headerPrefix: 'Svc-', knobs: { timeScale: 100 } });
    try {
      const target = await destination(() => ({ status: 500 }));
      const response = await fetch(`${svc.url}/v2/enqueue/q1/${target.url}/p`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${svc.credentials.token}`,
          'Svc-Retries': '1',
          'Svc-Retry-Delay': '10',
          'Svc-Forward-X-Id': '7',
          'Svc-Label': 'svc',
        },
        body: 'x',
      });
      expect(response.status).toBe(200);
      const requests = await target.waitForRequests(2);
      expect(requests[0]!.headers['x-id']).toBe('7');
      expect(requests[0]!.headers['svc-message-id']).toMatch(/^msg_/);
      expect(requests[1]!.headers['svc-retried']).toBe('1');
      await waitFor(() => svc.groundTruth().byState.FAILED === 1);
      expect(svc.groundTruth().series.find((series) => series.state === 'FAILED')).toMatchObject({
        queue: 'q1',
        destination: new URL(target.url).host,
        count: 1,
      });
    } finally {
      await svc.close();
    }
  });

  it('uses the paid plan default of 5 retries', async () => {
    const paid = await createEmulator({ plan: 'payg' });
    try {
      const target = await destination();
      const response = await fetch(`${paid.url}/v2/publish/${target.url}/p`, {
        method: 'POST',
        headers: { authorization: `Bearer ${paid.credentials.token}` },
        body: 'x',
      });
      const { messageId } = (await response.json()) as { messageId: string };
      const [created] = await allLogs(paid, { messageId });
      expect(created!.maxRetries).toBe(5);
      expect(created!.timeout).toBe(2 * 3_600_000);

      // The defaults follow the account's plan when a test changes it.
      const patched = await fetch(`${paid.url}/__emulator/management/account`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'free' }),
      });
      expect(patched.status).toBe(200);
      const again = (await (
        await fetch(`${paid.url}/v2/publish/${target.url}/p`, {
          method: 'POST',
          headers: { authorization: `Bearer ${paid.credentials.token}` },
          body: 'x',
        })
      ).json()) as { messageId: string };
      const [createdFree] = await allLogs(paid, { messageId: again.messageId });
      expect(createdFree!.maxRetries).toBe(3);
      expect(createdFree!.timeout).toBe(15 * 60_000);
    } finally {
      await paid.close();
    }
  });
});
