// A collection of indexes as a management resource: what vector indexes (./index.ts) and search
// indexes (../search/index.ts) share. The API's routes GET <apiPath>, GET <apiPath>/{id} and
// GET <apiPath>/{id}/stats?period=; test-only routes POST / (add) and DELETE /{id} at its admin
// path; the same operations in process. Ids are deterministic: seeded by kind and name, and by
// the count of additions for an index added after start.
import express from 'express';
import type { z } from 'zod';
import { ManagementError } from '../errors.js';
import { handle, jsonErrorHandler } from '../http.js';
import { parseInput } from '../inputs.js';
import { parsePeriod, type StatsPeriod } from '../periods.js';
import type { Owner } from '../records.js';
import type { ManagementResource, ManagementResourceContext } from '../resource.js';
import type { InitialIndex } from './indexes.js';

export interface IndexKind<Input extends { name?: string | undefined }, Entry, Served, Stats> {
  /** `search` or `vector`: seeds of the ids, default names (`vector-index-3`), error messages. */
  kind: string;
  /** Path of the API's list: `/v2/vector/index`. */
  apiPath: string;
  /** Path of its test-only routes under /__emulator/management: `/vector-indexes`. */
  adminPath: string;
  /** Strict schema of a new index (ERR_EMULATOR_INPUT naming the field). */
  schema: z.ZodType<Input>;
  /** The starting indexes. */
  initial: readonly InitialIndex<Input>[];
  build(owner: Owner, seed: string, input: Input & { name: string }, createdMs: number): Entry;
  idOf(entry: Entry): string;
  /** An index as the API serves it at `nowMs`. */
  serve(entry: Entry, nowMs: number): Served;
  stats(entry: Entry, nowMs: number, period: StatsPeriod): Stats;
}

/** The indexes of one kind, their routes and their in-process operations. */
export interface IndexResource<
  Input,
  Entry,
  Served,
  Stats,
  Snapshot extends object,
> extends ManagementResource<Snapshot> {
  list(): Served[];
  get(id: string): Served;
  stats(id: string, period?: StatsPeriod): Stats;
  /** Adds an index (input checked strictly: ERR_EMULATOR_INPUT). */
  add(input?: Input): Served;
  delete(id: string): void;
  /** The indexes as kept, for a snapshot. */
  entries(): Entry[];
}

export function createIndexResource<
  Input extends { name?: string | undefined },
  Entry,
  Served,
  Stats,
  Snapshot extends object,
>(
  spec: IndexKind<Input, Entry, Served, Stats>,
  context: ManagementResourceContext,
  snapshot: (indexes: { list(): Served[]; entries(): Entry[] }, nowMs: number) => Snapshot,
): IndexResource<Input, Entry, Served, Stats, Snapshot> {
  const owner: Owner = { email: context.email };
  const startMs = Math.floor(context.now() / 1000) * 1000;
  let indexes = new Map<string, Entry>();
  /** Counts indexes added after start, so their ids stay deterministic (and unique per name). */
  let additions = 0;

  const put = (entry: Entry): Entry => {
    indexes.set(spec.idOf(entry), entry);
    return entry;
  };
  const find = (id: string): Entry => {
    const entry = indexes.get(id);
    if (entry === undefined) throw new ManagementError('ERR_EMULATOR_NOT_FOUND', `${spec.kind} index not found`);
    return entry;
  };

  const resource: IndexResource<Input, Entry, Served, Stats, Snapshot> = {
    adminPath: spec.adminPath,
    reset() {
      indexes = new Map();
      additions = 0;
      for (const { input, ageMs } of spec.initial) {
        put(spec.build(owner, `${spec.kind}:${input.name}`, input, startMs - ageMs));
      }
    },
    list: () => [...indexes.values()].map((entry) => spec.serve(entry, context.now())),
    get: (id) => spec.serve(find(id), context.now()),
    stats: (id, period = '1h') => spec.stats(find(id), context.now(), period),
    add(input) {
      const parsed = parseInput(spec.schema, input, `${spec.kind} index`);
      additions += 1;
      const name = parsed.name ?? `${spec.kind}-index-${additions}`;
      const seed = `${spec.kind}:${name}:${additions}`;
      return spec.serve(put(spec.build(owner, seed, { ...parsed, name }, context.now())), context.now());
    },
    delete(id) {
      find(id);
      indexes.delete(id);
    },
    entries: () => [...indexes.values()],
    snapshot: () => snapshot(resource, context.now()),
    mount(router, auth) {
      router.get(
        spec.apiPath,
        auth,
        handle((_req, res) => {
          res.json(resource.list());
        }),
      );
      router.get(
        `${spec.apiPath}/:id`,
        auth,
        handle((req, res) => {
          res.json(resource.get(req.params.id as string));
        }),
      );
      router.get(
        `${spec.apiPath}/:id/stats`,
        auth,
        handle((req, res) => {
          const period = parsePeriod(req.query.period);
          res.json(resource.stats(req.params.id as string, period));
        }),
      );
    },
    mountAdmin(router) {
      router.use(express.json({ limit: '100kb' }));
      router.post(
        '/',
        handle((req, res) => {
          res.status(201).json(resource.add(req.body as Input));
        }),
      );
      router.delete(
        '/:id',
        handle((req, res) => {
          resource.delete(req.params.id as string);
          res.json('OK');
        }),
      );
      router.use(jsonErrorHandler);
    },
  };
  resource.reset();
  return resource;
}
