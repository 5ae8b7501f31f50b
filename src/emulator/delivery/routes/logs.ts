// GET /v2/logs (key `logs`) and GET /v2/events (key `events`, what the official SDKs call):
// newest first, filters of the interface plus those the SDK sends, inclusive date bounds,
// count default 100 (larger values are clamped to the `maxPageSize` knob) and an opaque cursor
// absent on the last page. Knobs choose the side where the real service's behaviour is split:
// which paths exist, the grouped shape, trimBody, large bodies, numeric cursors.
import type { Request, RequestHandler } from 'express';
import { EmulatorInputError } from '../../errors.js';
import { sendError } from '../../http-util.js';
import type { Knobs } from '../../knobs.js';
import {
  LOG_STATES,
  toLogEntryJson,
  type LogEntryJson,
  type LogFilter,
  type LogState,
  type StoredEntry,
} from '../log-store.js';
import type { DeliveryService } from '../service.js';
import { largeBodyOf } from './large-bodies.js';
import { writeJsonStreamed } from './streamed-json.js';

export const DEFAULT_COUNT = 100;
/** The most any `count` is taken as; the `maxPageSize` knob clamps below it. */
export const MAX_COUNT = 100_000;

/** Cursors look like `<time>-<seq>`; only the sequence number matters, clients must not rely on either. */
export function encodeCursor(time: number, seq: number): string {
  return `${time}-${seq}`;
}

/** Numeric cursors (knob `numericCursor`: digits, number) are this plus the sequence number: beyond 2^53 on purpose. */
const NUMERIC_CURSOR_BASE = 10n ** 17n;

function decodeCursor(text: string): number {
  const trimmed = text.trim();
  if (/^\d{18,30}$/.test(trimmed)) {
    const seq = BigInt(trimmed) - NUMERIC_CURSOR_BASE;
    if (seq > 0n && seq <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(seq);
  }
  const match = /^\d+-(\d+)$/.exec(trimmed);
  if (!match) throw new EmulatorInputError('cursor', 'not a cursor returned by this service');
  return Number(match[1]);
}

const STATE_ALIASES: Record<string, LogState[]> = {
  IN_PROGRESS: ['ACTIVE', 'RETRY', 'ERROR'],
  CANCELED: ['CANCELLED'],
};

function parseStates(values: string[]): Set<LogState> {
  const states = new Set<LogState>();
  for (const value of values) {
    const upper = value.toUpperCase();
    const alias = STATE_ALIASES[upper];
    if (alias) alias.forEach((state) => states.add(state));
    else if ((LOG_STATES as readonly string[]).includes(upper)) states.add(upper as LogState);
    else
      throw new EmulatorInputError(
        'state',
        `unknown state "${value}"; use one of ${[...LOG_STATES, 'IN_PROGRESS'].join(', ')}`,
      );
  }
  return states;
}

function parseEpochMs(field: string, value: string): number {
  if (!/^\d{1,16}$/.test(value.trim())) throw new EmulatorInputError(field, 'must be unix milliseconds');
  return Number(value.trim());
}

export interface LogQuery {
  filter: LogFilter;
  count: number;
  cursor?: string;
  beforeSeq?: number;
  /** `trimBody`: bytes of body kept, -1 drops bodies; absent = untouched. */
  trimBody?: number;
  /** `groupBy=messageId` asked for the grouped shape. */
  grouped: boolean;
}

/** Parses the query string strictly: bad values are 400s naming the parameter; unknown parameters are ignored. */
export function parseLogQuery(params: URLSearchParams): LogQuery {
  // Repeated parameters are OR; comma-separated values are accepted too (not for url, which may hold commas).
  const many = (name: string, splitCommas = true): string[] =>
    params
      .getAll(name)
      .flatMap((value) => (splitCommas ? value.split(',') : [value]))
      .map((value) => value.trim())
      .filter((value) => value !== '');
  const setOf = (values: string[]): Set<string> | undefined => (values.length > 0 ? new Set(values) : undefined);

  const filter: LogFilter = {};
  filter.messageIds = setOf([...many('messageId'), ...many('messageIds')]);
  const states = many('state');
  if (states.length > 0) filter.states = parseStates(states);
  filter.urls = setOf(many('url', false));
  filter.topicNames = setOf([...many('topicName'), ...many('urlGroup')]);
  filter.scheduleIds = setOf(many('scheduleId'));
  filter.queueNames = setOf(many('queueName'));
  filter.labels = setOf(many('label'));
  filter.callerIps = setOf([...many('callerIp'), ...many('callerIP')]);
  filter.flowControlKeys = setOf(many('flowControlKey'));
  filter.hosts = setOf(many('host'));
  filter.paths = setOf(many('path', false));
  const fromDate = params.get('fromDate');
  if (fromDate !== null && fromDate.trim() !== '') filter.fromDate = parseEpochMs('fromDate', fromDate);
  const toDate = params.get('toDate');
  if (toDate !== null && toDate.trim() !== '') filter.toDate = parseEpochMs('toDate', toDate);

  let count = DEFAULT_COUNT;
  const countText = params.get('count');
  if (countText !== null && countText.trim() !== '') {
    if (!/^\d{1,9}$/.test(countText.trim()) || Number(countText) < 1)
      throw new EmulatorInputError('count', 'must be a positive integer');
    count = Math.min(MAX_COUNT, Number(countText));
  }
  const query: LogQuery = { filter, count, grouped: params.get('groupBy')?.trim() === 'messageId' };
  const trimBody = params.get('trimBody');
  if (trimBody !== null && trimBody.trim() !== '') {
    if (!/^(-1|\d{1,9})$/.test(trimBody.trim())) throw new EmulatorInputError('trimBody', 'must be -1 or a byte count');
    query.trimBody = Number(trimBody);
  }
  const cursor = params.get('cursor');
  if (cursor !== null && cursor.trim() !== '') {
    query.cursor = cursor.trim();
    query.beforeSeq = decodeCursor(cursor);
  }
  return query;
}

function rawQuery(req: Request): URLSearchParams {
  const questionMark = req.originalUrl.indexOf('?');
  return new URLSearchParams(questionMark === -1 ? '' : req.originalUrl.slice(questionMark + 1));
}

/** Applies the body knobs to one served entry: large bodies, then trimBody when honoured. */
function withBodies(entry: StoredEntry, json: LogEntryJson, knobs: Knobs, trimBody: number | undefined): LogEntryJson {
  const large = largeBodyOf(entry.message.messageId, knobs.largeBodyRatio, knobs.largeBodyBytes);
  if (large !== undefined) {
    json.body = large;
    if (entry.state === 'ERROR') json.responseBody = large;
  }
  if (trimBody !== undefined && knobs.honourTrimBody) {
    for (const key of ['body', 'responseBody'] as const) {
      const value = json[key];
      if (typeof value !== 'string') continue;
      if (trimBody < 0) delete json[key];
      else if (value.length > trimBody) json[key] = value.slice(0, trimBody);
    }
  }
  return json;
}

/** Entries of one page grouped by message, in the order each message first appears. */
function groupByMessage(entries: LogEntryJson[]): { messageId: string; events: LogEntryJson[] }[] {
  const groups = new Map<string, LogEntryJson[]>();
  for (const entry of entries) {
    const id = String(entry.messageId);
    const group = groups.get(id);
    if (group) group.push(entry);
    else groups.set(id, [entry]);
  }
  return [...groups].map(([messageId, events]) => ({ messageId, events }));
}

export function logsHandler(service: DeliveryService, key: 'logs' | 'events'): RequestHandler {
  return async (req, res) => {
    const knobs = service.knobs;
    if (knobs.logsPaths !== 'both' && knobs.logsPaths !== key) {
      sendError(res, 404, `no route for ${req.method} ${req.path.slice(0, 200)}`);
      return;
    }
    const query = parseLogQuery(rawQuery(req));
    const page = service.log.page({
      filter: query.filter,
      count: Math.min(query.count, knobs.maxPageSize),
      beforeSeq: query.beforeSeq,
      visibleUntil: service.clock.now() - knobs.logVisibilityDelayMs,
    });
    let cursor: string | undefined;
    if (query.cursor !== undefined && service.takeOneShot('repeatCursorNext')) {
      // Fault: the service hands back the cursor it was given.
      cursor = query.cursor;
    } else if (page.nextBeforeSeq !== undefined) {
      const last = page.entries[page.entries.length - 1]!;
      cursor =
        knobs.numericCursor === 'text'
          ? encodeCursor(last.time, last.seq)
          : String(NUMERIC_CURSOR_BASE + BigInt(last.seq));
    }
    const entries = page.entries.map((entry) =>
      withBodies(entry, toLogEntryJson(entry, knobs.omitState), knobs, query.trimBody),
    );
    const grouped = knobs.logsShape === 'grouped' || query.grouped;
    const listKey = grouped ? 'messages' : key;
    const items: unknown[] = grouped ? groupByMessage(entries) : entries;
    const large = knobs.largeBodyRatio > 0 && knobs.largeBodyBytes > 0;
    const bareNumber = cursor !== undefined && knobs.numericCursor === 'number';
    if (!large && !bareNumber) {
      const body: Record<string, unknown> = {};
      if (cursor !== undefined) body.cursor = cursor;
      body[listKey] = items;
      // res.json keeps the malformed and truncated faults working on ordinary pages.
      res.json(body);
      return;
    }
    // A page of large bodies can be far over what one string may hold: written entry by entry.
    // A numeric cursor is written as a bare JSON number, which JSON.stringify cannot make.
    const head = cursor === undefined ? '{' : `{"cursor":${bareNumber ? cursor : JSON.stringify(cursor)},`;
    await writeJsonStreamed(res, `${head}${JSON.stringify(listKey)}:[`, items, ']}');
  };
}
