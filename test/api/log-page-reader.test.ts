// The single-pass log page reader against the general path it stands in for (skim, JSON.parse,
// parseLogsPage): on every page it reads, the general path must accept the page and give the
// same entries in every field the exporter reads and the same cursor; a page it does not read
// goes the general way. Pages of every usual shape must be read (the fast path is taken), and
// thousands of seeded mutations of them (bytes changed, inserted, removed, cut) must never be
// read differently. Pure functions over bytes: no peer to talk to.
import { describe, expect, it } from 'vitest';
import { LOG_BODY_KEYS } from '../../src/api/delivery.js';
import { skimWhole } from '../../src/api/json-skim.js';
import { readLogsPage } from '../../src/api/log-page-reader.js';
import { parseLogsPage, type LogEntry, type LogsPage } from '../../src/api/schemas/logs.js';
import { seededRandom } from '../../bench/measure.js';

const READ_FIELDS = [
  'time',
  'messageId',
  'state',
  'error',
  'nextDeliveryTime',
  'url',
  'topicName',
  'endpointName',
  'scheduleId',
  'queueName',
  'responseStatus',
  'label',
  'labels',
  'notBefore',
] as const;

const LIMITS = { skipKeys: LOG_BODY_KEYS, quoteNumberKeys: ['cursor'], maxKeptBytes: 1 << 30, maxTotalBytes: 1 << 30 };
const CONTEXT = { api: 'qstash' as const, endpoint: '/v2/logs', method: 'GET' };

function general(bytes: Buffer): LogsPage | Error {
  try {
    return parseLogsPage(JSON.parse(skimWhole(bytes, LIMITS)), CONTEXT);
  } catch (error) {
    return error as Error;
  }
}

function readFields(entry: LogEntry): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const field of READ_FIELDS) if (entry[field] !== undefined) fields[field] = entry[field];
  // Not checked: a value that is not a number reads as no time (notBeforeMs), whatever it is.
  if (fields.notBefore !== undefined && typeof fields.notBefore !== 'number') fields.notBefore = null;
  return fields;
}

/** Reads `bytes` both ways; true when the reader read it (and then agreed). */
function agree(bytes: Buffer): boolean {
  const fast = readLogsPage(bytes);
  if (fast === null) return false;
  const reference = general(bytes);
  if (reference instanceof Error) {
    throw new Error(
      `the reader read a page the general path refuses (${reference.message}): ${bytes.toString('utf8').slice(0, 300)}`,
    );
  }
  expect(fast.cursor).toBe(reference.cursor);
  expect(fast.logs.map(readFields)).toEqual(reference.logs.map(readFields));
  return true;
}

const page = (body: unknown): Buffer => Buffer.from(JSON.stringify(body));

function entry(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    time: 1_767_268_800_000 + i,
    messageId: `msg_${i.toString(36)}`,
    state: ['CREATED', 'ACTIVE', 'DELIVERED', 'ERROR', 'RETRY'][i % 5],
    url: `https://app${i % 3}.example.com/hook`,
    header: { 'Content-Type': ['application/json'], 'Upstash-Trace': [`t-${i}`] },
    body: Buffer.from(`{"order":${i}}`).toString('base64'),
    method: 'POST',
    timeout: 30_000,
    maxRetries: 3,
    ...(i % 4 === 0 ? { queueName: 'orders', label: 'billing', labels: ['billing', 'eu'] } : {}),
    ...(i % 5 === 3
      ? { responseStatus: 500, error: 'status 500', responseBody: 'b3Vw', nextDeliveryTime: 1e12 + i }
      : {}),
    ...(i % 7 === 0 ? { topicName: 'grp', endpointName: 'ep', scheduleId: 'scd_1', callerIP: '10.0.0.1' } : {}),
    ...(i % 6 === 1 ? { notBefore: i % 12 === 1 ? 1_767_268_900 : 'soon' } : {}),
    ...extra,
  };
}

/** Pages of the usual shapes, every one of which the reader must read. */
function usualPages(): Buffer[] {
  const entries = Array.from({ length: 40 }, (_, i) => entry(i));
  return [
    page({ cursor: '1767268800000-17', logs: entries }),
    page({ events: entries, cursor: '' }),
    page({ logs: [] }),
    page({ events: [], cursor: null }),
    Buffer.from(`{"cursor": 123456789012345678901234 , "logs":[]}`),
    Buffer.from(JSON.stringify({ logs: entries.slice(0, 5) }, null, 2)),
    Buffer.from(` \r\n\t${JSON.stringify({ logs: entries.slice(0, 3) })}\n`),
    page({
      logs: [
        entry(1, {
          time: '1767268800001',
          state: null,
          labels: null,
          url: null,
          futureField: { a: [1, 'x', null, true, false, -1.5e-3] },
        }),
      ],
    }),
    page({ logs: [entry(2, { error: 'said "no"\n\ttab \\ \u00e9 \ud83d\ude00 \u0001', url: 'https://é.example/ü' })] }),
    page({ logs: [entry(3, { messageId: 'msg_\u20ac', queueName: 'q\u00fcue', labels: ['\u00e9', 'a"b'] })] }),
    page({ logs: [entry(4, { responseStatus: 2e2, nextDeliveryTime: 1.5, timeout: -0, maxRetries: 1e300 })] }),
    page({ logs: [entry(5, { time: 0 })], messages: [{ messageId: 'x', events: [] }], other: [[[{}]]] }),
    page({
      logs: [entry(6, { state: 'CREATED', messageId: 'dup' }), entry(6, { state: 'CREATED', messageId: 'dup' })],
    }),
    Buffer.from('{"logs":[{"time":1,"messageId":"a","state":"X","state":null,"url":"u","url":"v"}]}'),
    Buffer.from('{"logs":[{"time":"9007199254740993","messageId":"a"}]}'),
    Buffer.from('{"logs":[{"time":9007199254740991,"messageId":"a","body":"\\"quoted\\\\","responseBody":null}]}'),
  ];
}

describe('the single-pass log page reader', () => {
  it('reads pages of every usual shape, as the general path does', () => {
    for (const bytes of usualPages()) expect(agree(bytes), bytes.toString('utf8').slice(0, 200)).toBe(true);
  });

  it('leaves to the general path what it does not take: other shapes, wrong types, malformed JSON', () => {
    const leftOver = [
      '{"messages":[{"messageId":"m","events":[{"time":1}]}]}',
      '{"logs":[{"time":1,"messageId":"a"}],"events":[]}',
      '{"logs":[{"time":1,"messageId":"a"}],"logs":[]}',
      '{"logs":[{"time":-1,"messageId":"a"}]}',
      '{"logs":[{"time":1.5,"messageId":"a"}]}',
      '{"logs":[{"time":"12a","messageId":"a"}]}',
      '{"logs":[{"time":1}]}',
      '{"logs":[{"time":1,"messageId":null}]}',
      '{"logs":[{"time":1,"messageId":"a","responseStatus":"500"}]}',
      '{"logs":[{"time":1,"messageId":"a","labels":["a",7]}]}',
      '{"logs":[{"time":1,"messageId":"a","header":[]}]}',
      '{"logs":[{"time":1,"messageId":"a","body":5}]}',
      '{"logs":[{"time":1,"messageId":"a","\\u0074ime":2}]}',
      '{"logs":[{"time":1,"messageId":"a","x":NaN}]}',
      '{"logs":[{"time":1,"messageId":"a","x":1e999}]}',
      '{"logs":[{"time":1,"messageId":"a\u0001"}]}',
      '{"logs":[{"time":1,"messageId":"a","x":"\\q"}]}',
      '{"logs":[{"time":1,"messageId":"a"}],}',
      '{"logs":[{"time":1,"messageId":"a"}]} x',
      '{"logs":[null]}',
      '{"logs":{}}',
      '{"cursor":true,"logs":[]}',
      '[]',
      '',
      `{"logs":[{"time":1,"messageId":"a","deep":${'['.repeat(100)}${']'.repeat(100)}}]}`,
    ];
    for (const text of leftOver) expect(readLogsPage(Buffer.from(text)), text).toBeNull();
  });

  it('never reads a page differently from the general path: 20,000 seeded mutations of usual pages', () => {
    const random = seededRandom(Number(process.env.READER_SEED ?? 424_242));
    const sources = usualPages().filter((bytes) => bytes.length < 4000);
    let read = 0;
    for (let n = 0; n < 20_000; n++) {
      const source = sources[Math.floor(random() * sources.length)]!;
      const bytes = Buffer.from(source);
      let mutated: Buffer = bytes;
      const at = Math.floor(random() * bytes.length);
      const roll = random();
      const byte = '{}[]",:\\ 0123456789-.eEtrufalsn\u0001\u00e9xq'.charCodeAt(Math.floor(random() * 33));
      if (roll < 0.4) {
        bytes[at] = byte;
      } else if (roll < 0.7) {
        mutated = Buffer.concat([bytes.subarray(0, at), Buffer.from([byte]), bytes.subarray(at)]);
      } else if (roll < 0.9) {
        mutated = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
      } else {
        mutated = bytes.subarray(0, at);
      }
      if (agree(mutated)) read += 1;
    }
    // Many mutations land in values the reader checks and keeps reading: it is not giving up on everything.
    expect(read).toBeGreaterThan(2_000);
  });
});
