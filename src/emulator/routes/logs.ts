// GET /v2/logs (key `logs`) and GET /v2/events (key `events`, what the official SDKs call):
// newest first, filters of the interface plus those the SDK sends, inclusive date bounds,
// count default 100 (larger values are clamped to 100) and an opaque cursor absent on the
// last page.
import type { Request, RequestHandler } from 'express';
import { EmulatorInputError } from '../errors.js';
import { LOG_STATES, toLogEntryJson, type LogFilter, type LogState } from '../log-store.js';
import type { DeliveryService } from '../service.js';

export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 100;

/** Cursors look like `<time>-<seq>`; only the sequence number matters, clients must not rely on either. */
export function encodeCursor(time: number, seq: number): string {
  return `${time}-${seq}`;
}

function decodeCursor(text: string): number {
  const match = /^\d+-(\d+)$/.exec(text.trim());
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
    else throw new EmulatorInputError('state', `unknown state "${value}"; use one of ${[...LOG_STATES, 'IN_PROGRESS'].join(', ')}`);
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
    if (!/^\d{1,9}$/.test(countText.trim()) || Number(countText) < 1) throw new EmulatorInputError('count', 'must be a positive integer');
    count = Math.min(MAX_COUNT, Number(countText));
  }
  const query: LogQuery = { filter, count };
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

export function logsHandler(service: DeliveryService, key: 'logs' | 'events'): RequestHandler {
  return (req, res) => {
    const query = parseLogQuery(rawQuery(req));
    const knobs = service.knobs;
    const page = service.log.page({
      filter: query.filter,
      count: query.count,
      beforeSeq: query.beforeSeq,
      visibleUntil: service.clock.now() - knobs.logVisibilityDelayMs,
    });
    const body: Record<string, unknown> = {};
    if (query.cursor !== undefined && service.takeOneShot('repeatCursorNext')) {
      // Fault: the service hands back the cursor it was given.
      body.cursor = query.cursor;
    } else if (page.nextBeforeSeq !== undefined) {
      const last = page.entries[page.entries.length - 1]!;
      body.cursor = encodeCursor(last.time, last.seq);
    }
    body[key] = page.entries.map((entry) => toLogEntryJson(entry, knobs.omitState));
    res.json(body);
  };
}
