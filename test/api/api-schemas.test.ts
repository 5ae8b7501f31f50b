// Upstream schemas and the series timestamp parser: pure functions, no server needed.
import { describe, expect, it } from 'vitest';
import { ApiSchemaDriftError } from '../../src/api/errors.js';
import { parseWith } from '../../src/api/schemas/common.js';
import type { SchemaContext } from '../../src/api/schemas/common.js';
import { parseLogsPage } from '../../src/api/schemas/logs.js';
import { enqueueResponseSchema, triggerResultSchema } from '../../src/api/schemas/publish.js';
import { accountSchema, vectorIndexListSchema, vectorStatsSchema } from '../../src/api/schemas/management.js';
import { parseSeriesTimestamp } from '../../src/api/timestamps.js';

const context: SchemaContext = { api: 'qstash', endpoint: '/v2/test', method: 'POST' };

function driftOf(run: () => unknown): ApiSchemaDriftError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiSchemaDriftError);
    return error as ApiSchemaDriftError;
  }
  throw new Error('expected schema drift');
}

describe('enqueue and trigger responses', () => {
  it('always yields an array: object, bare array, or {messages}', () => {
    expect(parseWith(enqueueResponseSchema, { messageId: 'a', url: 'u' }, context)).toEqual([
      { messageId: 'a', url: 'u' },
    ]);
    expect(
      parseWith(enqueueResponseSchema, [{ messageId: 'a' }, { messageId: 'b', deduplicated: true }], context),
    ).toHaveLength(2);
    expect(parseWith(enqueueResponseSchema, { messages: [{ messageId: 'c' }] }, context)).toEqual([{ messageId: 'c' }]);
  });

  it('names the most specific drift inside the accepted shapes', () => {
    expect(driftOf(() => parseWith(enqueueResponseSchema, { url: 'x' }, context)).path).toBe('messageId');
    expect(driftOf(() => parseWith(enqueueResponseSchema, [{ messageId: 1 }], context)).path).toBe('[0].messageId');
    expect(driftOf(() => parseWith(enqueueResponseSchema, { messages: [{ messageId: 'a' }, {}] }, context)).path).toBe(
      'messages[1].messageId',
    );
    const top = driftOf(() => parseWith(enqueueResponseSchema, 'OK', context));
    expect(top.path).toBe('');
    expect(top.message).toContain('the response');
  });

  it('reads workflowCreatedAt as unix ms or a date text', () => {
    expect(
      parseWith(triggerResultSchema, { workflowRunId: 'r', workflowCreatedAt: 5 }, context).workflowCreatedAt,
    ).toBe(5);
    expect(
      parseWith(triggerResultSchema, { workflowRunId: 'r', workflowCreatedAt: '2025-10-23T17:34:00Z' }, context)
        .workflowCreatedAt,
    ).toBe(Date.UTC(2025, 9, 23, 17, 34));
    const drift = driftOf(() =>
      parseWith(triggerResultSchema, { workflowRunId: 'r', workflowCreatedAt: 'soon' }, context),
    );
    expect(drift.path).toBe('workflowCreatedAt');
    expect(drift.expected).toContain('timestamp');
  });
});

describe('management schemas', () => {
  it('accepts a record with fields dropped and added, typed where known', () => {
    const account = parseWith(accountSchema, { state: 'passive', budget: 10, enterprise: { enabled: true } }, context);
    expect(account).toMatchObject({ state: 'passive', budget: 10, enterprise: { enabled: true } });
    expect(driftOf(() => parseWith(accountSchema, { active: 'yes' }, context)).path).toBe('active');
  });

  it('types the max_* limits of a vector index: integers, -1 included, null as absent', () => {
    const listed = { id: 'v1', name: 'n', max_monthly_reranks: -1, max_vector_count: 200_000, max_daily_queries: null };
    const [index] = parseWith(vectorIndexListSchema, [listed], context);
    expect(index).toMatchObject({ max_monthly_reranks: -1, max_vector_count: 200_000 });
    expect(index!.max_daily_queries).toBeUndefined();
    // A wrong type is drift, not a silently missing limit.
    const text = driftOf(() =>
      parseWith(
        vectorIndexListSchema,
        [
          { id: 'v1', name: 'n' },
          { ...listed, max_monthly_reranks: '100' },
        ],
        context,
      ),
    );
    expect(text.path).toBe('[1].max_monthly_reranks');
    expect(text.received).toBe('string');
    const fraction = driftOf(() =>
      parseWith(vectorIndexListSchema, [{ ...listed, max_total_metadata_size: 1.5 }], context),
    );
    expect(fraction.path).toBe('[0].max_total_metadata_size');
  });

  it('treats null series as absent and checks the points', () => {
    const stats = parseWith(
      vectorStatsSchema,
      { vector_count: null, data_size: [{ x: 'a', y: 1, extra: true }] },
      context,
    );
    expect(stats.vector_count).toBeUndefined();
    expect(stats.data_size).toEqual([{ x: 'a', y: 1, extra: true }]);
    expect(driftOf(() => parseWith(vectorStatsSchema, { data_size: [{ x: 1, y: 1 }] }, context)).path).toBe(
      'data_size[0].x',
    );
  });
});

describe('parseLogsPage', () => {
  it('validates in place without copying entries', () => {
    const entry = { time: 1, messageId: 'm', header: { a: ['b'] } };
    const data = { cursor: 'c', logs: [entry] };
    const page = parseLogsPage(data, context);
    expect(page.logs[0]).toBe(entry);
    expect(page.cursor).toBe('c');
  });

  it('treats an empty or null cursor as the last page and rejects other cursor types', () => {
    expect(parseLogsPage({ cursor: '', logs: [] }, context).cursor).toBeUndefined();
    expect(parseLogsPage({ cursor: null, logs: [] }, context).cursor).toBeUndefined();
    expect(driftOf(() => parseLogsPage({ cursor: {}, logs: [] }, context)).path).toBe('cursor');
  });

  it('rejects non-integer or negative times and non-object entries', () => {
    expect(driftOf(() => parseLogsPage({ logs: [{ time: 1.5, messageId: 'm' }] }, context)).path).toBe('logs[0].time');
    expect(driftOf(() => parseLogsPage({ logs: [{ time: -1, messageId: 'm' }] }, context)).path).toBe('logs[0].time');
    expect(driftOf(() => parseLogsPage({ logs: [{ time: '12abc', messageId: 'm' }] }, context)).path).toBe(
      'logs[0].time',
    );
    expect(driftOf(() => parseLogsPage({ logs: [null] }, context)).path).toBe('logs[0]');
    expect(driftOf(() => parseLogsPage({ logs: [{ time: 1, messageId: 'm', header: [] }] }, context)).path).toBe(
      'logs[0].header',
    );
    expect(driftOf(() => parseLogsPage([], context)).path).toBe('');
  });

  it('checks every known field, read by the exporter or not: nulls become absent, wrong types are drift in table order', () => {
    const entry = { time: 1, messageId: 'm', label: null, timeout: null, queueName: 'q' };
    parseLogsPage({ logs: [entry] }, context);
    expect(entry).toEqual({ time: 1, messageId: 'm', label: undefined, timeout: undefined, queueName: 'q' });
    const valid = { time: 1, messageId: 'm', state: 'CREATED' };
    expect(driftOf(() => parseLogsPage({ logs: [valid, { ...valid, timeout: '30s' }] }, context)).path).toBe(
      'logs[1].timeout',
    );
    expect(driftOf(() => parseLogsPage({ logs: [{ ...valid, labels: ['a', 2] }] }, context)).path).toBe(
      'logs[0].labels',
    );
    expect(
      driftOf(() => parseLogsPage({ logs: [{ ...valid, nextDeliveryTime: Number.POSITIVE_INFINITY }] }, context)).path,
    ).toBe('logs[0].nextDeliveryTime');
    // Two wrong fields: the first of the table (header) is named, whatever the order in the entry.
    const twoWrong = JSON.parse('{"time":1,"messageId":"m","maxRetries":"3","header":"h"}') as unknown;
    expect(driftOf(() => parseLogsPage({ logs: [twoWrong] }, context)).path).toBe('logs[0].header');
    // Unknown fields pass whatever their type.
    expect(parseLogsPage({ logs: [{ ...valid, somethingNew: [1, { a: null }] }] }, context).logs).toHaveLength(1);
  });
});

describe('parseSeriesTimestamp', () => {
  it.each([
    ['2025-10-19 18:33:05.244068975 +0000 UTC', Date.UTC(2025, 9, 19, 18, 33, 5, 244)],
    ['2025-10-23 17:34:00.000 +0000 UTC', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23 17:34:00 +0000 UTC', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23 17:34:00.5 +0000 UTC', Date.UTC(2025, 9, 23, 17, 34, 0, 500)],
    ['2025-10-23 17:34:00. +0000 UTC', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23 19:34:00.123 +0200 CEST', Date.UTC(2025, 9, 23, 17, 34, 0, 123)],
    ['2025-10-23 17:34:00 +0000 UTC m=+0.001234', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23T17:34:00Z', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23T17:34:00.123456789Z', Date.UTC(2025, 9, 23, 17, 34, 0, 123)],
    ['2025-10-23T12:34:00-05:00', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23T17:34Z', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
    ['2025-10-23 17:34:00', Date.UTC(2025, 9, 23, 17, 34, 0, 0)],
  ])('%s', (text, expected) => {
    expect(parseSeriesTimestamp(text)).toBe(expected);
  });

  it.each([
    '',
    'yesterday',
    '2025-13-01 00:00:00 +0000 UTC',
    '2025-02-30 00:00:00 +0000 UTC',
    '2025-10-23 24:00:00 +0000 UTC',
    '2025-10-23 17:34:00.1234567890 +0000 UTC',
    '2025-10-23 17:34:00 +2500 UTC',
    '1761200000',
  ])('rejects %j', (text) => {
    expect(parseSeriesTimestamp(text)).toBeUndefined();
  });
});
