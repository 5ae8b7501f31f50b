// A hostile upstream for fuzzing the API clients and the collectors: a real node:http server on
// 127.0.0.1 that answers every request with a generated response, drawn from a seeded PRNG so
// a failure replays from its seed. Responses are valid, odd-but-acceptable, or bad:
//   bad     not JSON, HTML with 200, empty, truncated, bytes that are not HTTP, NaN literals,
//           error statuses, the wrong JSON type at the top or in a required field, the list
//           missing, deep nesting where a record is expected, MBs of text that is not JSON;
//   either  random type mutations at any path, numbers -1 / 1e308 / 1e309 / -0 / 0.5 / 2^53+1,
//           unknown states, MBs of text or 10,000 levels of nesting inside a free field, a
//           cursor that repeats forever, a wrong content type on a valid body;
//   good    a valid answer.
// The server records, per caller (told apart by the credentials it sends), the verdict of every
// response, so a driver calling sequentially knows exactly what each call received.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type HostileEndpoint =
  'logs' | 'schedules' | 'account' | 'search' | 'vectorList' | 'vectorStats' | 'workflows' | 'other';
export type Verdict = 'good' | 'either' | 'bad';

export interface HostileReply {
  kind: string;
  verdict: Verdict;
  status: number;
  contentType: string;
  body: string;
  /** Declare the full length, send half, close the connection. */
  truncate?: boolean;
  /** Write bytes that are not an HTTP response and close. */
  garbage?: boolean;
}

const MB = 1024 * 1024;
/** Built once: big strings are the expensive part of a hostile answer. */
const HUGE = 'x'.repeat(3 * MB);
const LONG_LABEL = 'q'.repeat(10 * 1024);
const DEPTH = 10_000;
const DEEP_ARRAY = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;
const KNOWN_STATES = ['CREATED', 'ACTIVE', 'RETRY', 'ERROR', 'DELIVERED', 'FAILED', 'CANCEL_REQUESTED', 'CANCELLED'];
const ODD_STATES = [
  'EXPLODED',
  '',
  'cancelled',
  'CANCELED',
  'delivered ',
  'ÉTAT',
  '🙂',
  'A'.repeat(200),
  'IN_PROGRESS',
  'UNKNOWN',
];
const SERIES_TIME = '2025-10-23 17:34:00 +0000 UTC';

export function endpointOf(path: string): HostileEndpoint {
  if (path === '/v2/logs' || path === '/v2/events') return 'logs';
  if (path.startsWith('/v2/schedules')) return 'schedules';
  if (/^\/v2\/(qstash|svc)\/user$/.test(path)) return 'account';
  if (path === '/v2/search') return 'search';
  if (path === '/v2/vector/index') return 'vectorList';
  if (/^\/v2\/vector\/index\/[^/]+\/stats$/.test(path)) return 'vectorStats';
  if (path === '/v2/workflows/logs') return 'workflows';
  return 'other';
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (random: Random, below: number): number => Math.floor(random() * below);

// ---- valid answers ---------------------------------------------------------------------------

const RUN_STATES = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'];
const STEP_STATES = ['STEP_SUCCESS', 'STEP_RETRY', 'STEP_FAILED', 'STEP_PROGRESS', 'STEP_CANCELED'];

/** A page of workflow runs, newest first, each with a few steps. */
function validWorkflows(random: Random, query: URLSearchParams): Record<string, unknown> {
  const to = Number(query.get('toDate') ?? Date.now());
  let time = Number.isFinite(to) ? to : Date.now();
  const runs: Array<Record<string, unknown>> = [];
  for (let i = int(random, 12); i > 0; i--) {
    time -= int(random, 500);
    const state = pick(random, RUN_STATES);
    const steps = Array.from({ length: int(random, 4) }, (_, n) => ({
      type: 'sequential',
      steps: [
        {
          stepId: n + 1,
          stepName: `step-${n + 1}`,
          stepType: pick(random, ['Run', 'Call', 'SleepFor', 'Wait']),
          state: pick(random, STEP_STATES),
          createdAt: time + n * 10,
          messageId: `msg_${int(random, 5000)}`,
        },
      ],
    }));
    const run: Record<string, unknown> = {
      workflowRunId: `wfr_${int(random, 5000)}`,
      workflowUrl: 'http://127.0.0.1:4000/wf',
      workflowState: state,
      workflowRunCreatedAt: time,
      steps,
    };
    if (state !== 'RUN_STARTED') run.workflowRunCompletedAt = time + int(random, 5000);
    runs.push(run);
  }
  return random() < 0.3 ? { cursor: `wr-${int(random, 1000)}`, runs } : { runs };
}

function validLogs(random: Random, query: URLSearchParams): Record<string, unknown> {
  const to = Number(query.get('toDate') ?? Date.now());
  const from = Number(query.get('fromDate') ?? to - 60_000);
  const top = Number.isFinite(to) ? to : Date.now();
  const bottom = Number.isFinite(from) && from <= top ? from : top - 60_000;
  const count = int(random, 101);
  const logs: Array<Record<string, unknown>> = [];
  let time = top;
  for (let i = 0; i < count; i++) {
    time = Math.max(bottom, time - int(random, 50));
    const state = pick(random, KNOWN_STATES);
    const entry: Record<string, unknown> = {
      time,
      messageId: `msg_${int(random, 5000)}`,
      state,
      url: `http://127.0.0.1:${4000 + int(random, 5)}/hook`,
      queueName: random() < 0.5 ? `queue-${int(random, 10)}` : undefined,
      header: { 'Content-Type': ['text/plain'] },
      body: 'aGVsbG8=',
      method: 'POST',
      maxRetries: 3,
    };
    if (state === 'ERROR') {
      entry.responseStatus = pick(random, [500, 404, 0]);
      entry.error = 'destination answered HTTP 500';
    }
    if (state === 'RETRY') entry.nextDeliveryTime = time + 1000;
    logs.push(entry);
  }
  const page: Record<string, unknown> = { logs };
  if (random() < 0.3 && logs.length > 0) page.cursor = `${time}-${int(random, 1e6)}`;
  return page;
}

function validSchedules(random: Random): unknown[] {
  return Array.from({ length: int(random, 5) }, (_, i) => ({
    scheduleId: `scd_${i}`,
    cron: '*/5 * * * *',
    destination: `http://127.0.0.1:400${i}/job`,
    createdAt: Date.now() - 86_400_000,
    method: 'POST',
    isPaused: random() < 0.3,
    nextScheduleTime: Date.now() + 60_000,
    lastScheduleTime: Date.now() - 60_000,
    lastScheduleStates: { msg_1: 'SUCCESS', msg_2: 'IN_PROGRESS' },
  }));
}

function validAccount(): Record<string, unknown> {
  return {
    state: 'active',
    active: true,
    type: 'paid',
    reserved_type: 'payg',
    creation_time: 1_700_000_000,
    max_message_size: 1_048_576,
    max_requests_per_day: -1,
    max_requests_per_second: 100,
    max_retries: 5,
    max_events_size: 10_000,
    max_dlq_retention_time_milis: 604_800_000,
    prod_pack_enabled: false,
    timeout: 7200,
    password: 'secret-field-that-must-be-dropped',
  };
}

function validSearch(random: Random): unknown[] {
  return Array.from({ length: int(random, 4) }, (_, i) => ({
    id: `search-${i}`,
    name: `index ${i}`,
    type: 'payg',
    region: 'eu-west-1',
    creation_time: 1_700_000_000,
    max_vector_count: 1_000_000,
    max_daily_queries: -1,
    input_enrichment_enabled: true,
    throughput_vector: [{ x: SERIES_TIME, y: 12 }],
    token: 'secret',
  }));
}

function validVectorList(random: Random): unknown[] {
  return Array.from({ length: int(random, 3) }, (_, i) => ({
    id: `vec-${i}`,
    name: `vectors ${i}`,
    type: 'fixed',
    region: 'us-east-1',
    dimension_count: 768,
    max_vector_count: 100_000,
    creation_time: 1_700_000_000,
  }));
}

function validVectorStats(random: Random): Record<string, unknown> {
  const series = (): unknown[] => [{ x: SERIES_TIME, y: random() * 100 }];
  return {
    pending_index_count: 0,
    current_vector_count: int(random, 10_000),
    daily_query_count: 10,
    monthly_query_count: 100,
    storage_usage: 1024,
    monthly_cost: 1.5,
    query_latency_mean: series(),
    query_latency_99: series(),
    update_throughput: series(),
    data_size: series(),
  };
}

function validBody(endpoint: HostileEndpoint, random: Random, query: URLSearchParams): unknown {
  switch (endpoint) {
    case 'logs':
      return validLogs(random, query);
    case 'schedules':
      return validSchedules(random);
    case 'account':
      return validAccount();
    case 'search':
      return validSearch(random);
    case 'vectorList':
      return validVectorList(random);
    case 'vectorStats':
      return validVectorStats(random);
    case 'workflows':
      return validWorkflows(random, query);
    case 'other':
      return {};
  }
}

// ---- mutations -------------------------------------------------------------------------------

/** A value of another JSON type than `value`. */
function otherType(random: Random, value: unknown): unknown {
  const candidates: unknown[] = ['text', 42, -1, 1.5, true, null, [], {}, [1, 'two'], { nested: { deeper: [] } }];
  for (;;) {
    const candidate = pick(random, candidates);
    if (
      typeof candidate !== typeof value ||
      Array.isArray(candidate) !== Array.isArray(value) ||
      (candidate === null) !== (value === null)
    )
      return candidate;
  }
}

/** Replaces the value at a random path of `root` (objects and arrays) by another type. */
function mutateRandomPath(random: Random, root: unknown): unknown {
  if (typeof root !== 'object' || root === null || random() < 0.15) return otherType(random, root);
  const container = root as Record<string, unknown> | unknown[];
  const keys = Array.isArray(container) ? container.map((_, i) => i) : Object.keys(container);
  if (keys.length === 0) return otherType(random, root);
  const key = pick(random, keys as Array<string | number>);
  (container as Record<string | number, unknown>)[key] = mutateRandomPath(
    random,
    (container as Record<string | number, unknown>)[key],
  );
  return root;
}

/** A required field of the endpoint's records given the wrong type: always schema drift. */
function breakRequired(endpoint: HostileEndpoint, random: Random, body: unknown): unknown {
  switch (endpoint) {
    case 'logs': {
      const page = body as { logs: Array<Record<string, unknown>> };
      const entry = page.logs[0];
      if (!entry) return { logs: 'not a list' };
      if (random() < 0.5) entry.time = pick(random, ['yesterday', -1, 1e308, 1.5, null, {}]);
      else entry.messageId = pick(random, [42, null, ['m'], { id: 1 }]);
      return page;
    }
    case 'schedules': {
      const list = body as Array<Record<string, unknown>>;
      if (list.length === 0) return { schedules: [] };
      if (random() < 0.5) list[0]!.scheduleId = pick(random, [5, { x: 1 }, null, ['scd']]);
      else list[0]!.createdAt = pick(random, ['soon', { x: 1 }, [1], true]);
      return list;
    }
    case 'account':
      return { ...(body as object), max_retries: 'many' };
    case 'search':
    case 'vectorList': {
      const list = body as Array<Record<string, unknown>>;
      if (list.length === 0) return 'no indexes';
      list[0]!.id = 7;
      return list;
    }
    case 'vectorStats':
      return { current_vector_count: '10' };
    case 'workflows': {
      const page = body as { runs: Array<Record<string, unknown>> };
      const run = page.runs[0];
      if (!run) return { runs: 'not a list' };
      if (random() < 0.5) run.workflowRunCreatedAt = pick(random, ['yesterday', null, {}, [1]]);
      else run.workflowRunId = pick(random, [42, null, ['wfr'], { id: 1 }]);
      return page;
    }
    case 'other':
      return undefined;
  }
}

function wrongTopLevel(endpoint: HostileEndpoint, random: Random): unknown {
  const wantsArray = endpoint === 'schedules' || endpoint === 'search' || endpoint === 'vectorList';
  return wantsArray
    ? pick(random, [{}, 'list', 12, true, null, { items: [] }])
    : pick(random, [[], 'object', 12, false, null]);
}

function withNumbers(random: Random, body: unknown): string {
  // 1e309 parses to Infinity; it must be written as text.
  const numbers = ['-1', '1e308', '1e309', '-1e309', '-0', '0.5', '9007199254740993', '1e-320'];
  return JSON.stringify(body, (_key, value: unknown) =>
    typeof value === 'number' && random() < 0.5 ? `§${pick(random, numbers)}§` : value,
  ).replace(/"§([^§]+)§"/g, '$1');
}

function withOddStates(random: Random, body: unknown): unknown {
  const page = body as { logs?: Array<Record<string, unknown>> };
  for (const entry of page.logs ?? []) if (random() < 0.5) entry.state = pick(random, ODD_STATES);
  return page;
}

/** Puts `raw` JSON text in a free field (one not checked by the schemas). */
function withRawField(endpoint: HostileEndpoint, random: Random, body: unknown, raw: string): string {
  const marker = '"§RAW§"';
  if (endpoint === 'logs') {
    const page = body as { logs: Array<Record<string, unknown>> };
    if (page.logs.length === 0) page.logs.push({ time: Date.now(), messageId: 'msg_raw', state: 'CREATED' });
    const entry = page.logs[int(random, page.logs.length)]!;
    entry[pick(random, ['header', 'unknownField', 'responseHeaders'])] = '§RAW§';
  } else if (Array.isArray(body)) {
    if (body.length > 0) (body[0] as Record<string, unknown>).extra = '§RAW§';
    else return JSON.stringify(body);
  } else if (typeof body === 'object' && body !== null) {
    (body as Record<string, unknown>).extra = '§RAW§';
  }
  return JSON.stringify(body).replace(marker, raw);
}

function withLongLabel(random: Random, body: unknown): unknown {
  const page = body as { logs?: Array<Record<string, unknown>> };
  const entry = page.logs?.[0];
  if (entry)
    entry[pick(random, ['queueName', 'url', 'topicName', 'endpointName'])] = pick(random, [
      LONG_LABEL,
      `http://127.0.0.1:1/${LONG_LABEL}`,
      'a\nb"c\\d\u0000e',
    ]);
  return page;
}

function withCursorLoop(body: unknown): unknown {
  const page = body as { logs: Array<Record<string, unknown>>; cursor?: string };
  if (page.logs.length === 0) page.logs.push({ time: Date.now(), messageId: 'msg_loop', state: 'ACTIVE' });
  page.cursor = 'the-same-cursor-again';
  return page;
}

const ERROR_STATUSES = [204, 299, 301, 304, 400, 401, 403, 404, 408, 409, 418, 429, 500, 502, 503, 504, 599];

// ---- one reply -------------------------------------------------------------------------------

const json = 'application/json';

export function hostileReply(endpoint: HostileEndpoint, query: URLSearchParams, random: Random): HostileReply {
  const valid = validBody(endpoint, random, query);
  const roll = random();
  const reply = (kind: string, verdict: Verdict, body: string, extra: Partial<HostileReply> = {}): HostileReply => ({
    kind,
    verdict,
    status: 200,
    contentType: json,
    body,
    ...extra,
  });
  // Ranges of `roll`: rare expensive cases first, then the common ones.
  if (roll < 0.006) return reply('huge-not-json', 'bad', `{"logs":[${HUGE}`);
  if (roll < 0.014)
    return reply('huge-string-field', 'either', withRawField(endpoint, random, valid, JSON.stringify(HUGE)));
  if (roll < 0.02)
    return reply(
      'deep-nesting-top',
      'bad',
      random() < 0.5 ? DEEP_ARRAY : endpoint === 'logs' ? `{"logs":${DEEP_ARRAY}}` : DEEP_ARRAY,
    );
  if (roll < 0.03)
    return reply(
      'deep-nesting-field',
      'either',
      withRawField(endpoint, random, valid, random() < 0.5 ? DEEP_OBJECT : DEEP_ARRAY),
    );
  if (roll < 0.1) return reply('valid', 'good', JSON.stringify(valid));
  if (roll < 0.16)
    return reply(
      'not-json',
      'bad',
      pick(random, [
        '{<',
        'null,',
        '{"logs": [',
        'undefined',
        "{'single': 'quotes'}",
        '\u0000\u0001\u0002',
        '{"a":1}{"b":2}',
      ]),
    );
  if (roll < 0.2)
    return reply('html-200', 'bad', '<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>', {
      contentType: 'text/html',
    });
  if (roll < 0.23) return reply('empty', 'bad', '');
  if (roll < 0.27) return reply('truncated', 'bad', JSON.stringify(valid), { truncate: true });
  if (roll < 0.29) return reply('not-http', 'bad', '', { garbage: true });
  if (roll < 0.32) {
    const text = JSON.stringify(valid);
    // A number right after a key (not a port inside a URL string).
    const withNaN = text.replace(/":(-?\d+)/, '":NaN');
    return reply('nan-literal', 'bad', withNaN === text ? '{"value":NaN,"logs":[]}' : withNaN);
  }
  if (roll < 0.42) {
    const status = pick(random, ERROR_STATUSES);
    const body = pick(random, [
      '',
      '{"error":"upstream says no"}',
      '<html>oops</html>',
      '{"error":',
      HUGE.slice(0, 100_000),
    ]);
    // A 2xx with a JSON body could be a valid answer: those get no body (or not JSON).
    const bodyless = status === 204 || status === 304 || status === 299;
    return reply(`status-${status}`, 'bad', bodyless ? '' : body, {
      status,
      contentType: random() < 0.5 ? json : 'text/html',
    });
  }
  if (roll < 0.5) return reply('wrong-top-level-type', 'bad', JSON.stringify(wrongTopLevel(endpoint, random)));
  if (roll < 0.58) {
    const broken = breakRequired(endpoint, random, valid);
    if (broken !== undefined) return reply('wrong-required-field', 'bad', JSON.stringify(broken));
  }
  if (roll < 0.62 && endpoint === 'logs')
    return reply(
      'list-missing',
      'bad',
      JSON.stringify(pick(random, [{}, { cursor: 'c' }, { entries: [] }, { logs: null, events: null }])),
    );
  if (roll < 0.72) return reply('random-type-mutation', 'either', JSON.stringify(mutateRandomPath(random, valid)));
  if (roll < 0.8) return reply('odd-numbers', 'either', withNumbers(random, valid));
  if (roll < 0.85 && endpoint === 'logs')
    return reply('unknown-states', 'either', JSON.stringify(withOddStates(random, valid)));
  if (roll < 0.88 && endpoint === 'logs')
    return reply('odd-label-values', 'either', JSON.stringify(withLongLabel(random, valid)));
  if (roll < 0.93 && endpoint === 'logs') return reply('cursor-loop', 'either', JSON.stringify(withCursorLoop(valid)));
  if (roll < 0.96)
    return reply('wrong-content-type', 'either', JSON.stringify(valid), {
      contentType: pick(random, ['text/html', 'application/xml', 'text/plain', 'image/png']),
    });
  return reply('valid', 'good', JSON.stringify(valid));
}

// ---- the server --------------------------------------------------------------------------------

export interface Served {
  kind: string;
  verdict: Verdict;
}

export interface HostileServer {
  url: string;
  /** Responses sent, in total and by kind. */
  total(): number;
  kinds(): Map<string, number>;
  /** The responses sent to `caller` since the last take (and forgets them). */
  take(caller: string): Served[];
  /** Responses sent to `caller`, all time. */
  sentTo(caller: string): number;
  close(): Promise<void>;
}

/** Who called: the Bearer token, or the user of Basic auth. */
export function callerOf(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? '';
  if (auth.startsWith('Bearer ')) return auth.slice(7);
  if (auth.startsWith('Basic ')) return Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':')[0] ?? '';
  return '';
}

export async function startHostileServer(random: Random): Promise<HostileServer> {
  const pending = new Map<string, Served[]>();
  const sent = new Map<string, number>();
  const kinds = new Map<string, number>();
  let total = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://hostile');
    const caller = callerOf(req);
    const reply = hostileReply(endpointOf(url.pathname), url.searchParams, random);
    total += 1;
    kinds.set(reply.kind, (kinds.get(reply.kind) ?? 0) + 1);
    sent.set(caller, (sent.get(caller) ?? 0) + 1);
    const list = pending.get(caller) ?? [];
    list.push({ kind: reply.kind, verdict: reply.verdict });
    pending.set(caller, list);

    if (reply.garbage) {
      req.socket.end('HTTP/1.1 banana\r\n\u0000\u0000garbage\r\n\r\n');
      return;
    }
    const body = Buffer.from(reply.body, 'utf8');
    if (reply.truncate) {
      res.writeHead(200, { 'content-type': reply.contentType, 'content-length': String(body.length) });
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
      return;
    }
    const headers: Record<string, string> = { 'content-type': reply.contentType };
    if (reply.status === 429) {
      // Half the time the announced wait is far away (fails at once), else none (backoff).
      if (random() < 0.5) headers['retry-after'] = String(3600);
    }
    res.writeHead(reply.status, headers);
    res.end(reply.status === 204 || reply.status === 304 ? undefined : body);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    total: () => total,
    kinds: () => kinds,
    take: (caller) => {
      const list = pending.get(caller) ?? [];
      pending.delete(caller);
      return list;
    },
    sentTo: (caller) => sent.get(caller) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
