// The regions' parts of the one state file, on the state module alone (the whole exporter's
// cases are in state-regions-takeover.test.ts): many saves of two regions' owners and sections at
// once keep every region's newest part; a part written for another token is set aside by a copy,
// the other regions' parts stay; a region not configured keeps its part byte for byte, also when
// it held the top level.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CheckpointFile,
  CheckpointSection,
  claimStateFile,
  STATE_FORMAT,
  STATE_VERSION,
} from '../../src/state/index.js';

const dir = mkdtempSync(join(tmpdir(), 'upstash-exporter-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ownerSchema = z.object({ n: z.number() }).strict();
const sectionSchema = z.object({ m: z.number() }).strict();
const EU = { name: 'eu-central-1', upstream: 'sha256:eu' };
const US = { name: 'us-east-1', upstream: 'sha256:us' };

function owner(path: string, region: { name: string; upstream: string }): CheckpointFile<{ n: number }> {
  return new CheckpointFile({ path, upstream: region.upstream, region: region.name, schema: ownerSchema });
}

function section(path: string, region: { name: string; upstream: string }): CheckpointSection<{ m: number }> {
  return new CheckpointSection({
    path,
    upstream: region.upstream,
    region: region.name,
    name: 'workflows',
    schema: sectionSchema,
  });
}

interface Written {
  region?: string;
  upstream: string;
  payload: Record<string, unknown>;
  regions?: Record<string, { upstream: string; payload: Record<string, unknown> }>;
}

function read(path: string): Written {
  return JSON.parse(readFileSync(path, 'utf8')) as Written;
}

function partOf(file: Written, region: string): { upstream: string; payload: Record<string, unknown> } | undefined {
  const part = file.region === region ? file : file.regions?.[region];
  return part === undefined ? undefined : { upstream: part.upstream, payload: part.payload };
}

function envelope(top: { name: string; upstream: string; payload: unknown }, others: Written['regions'] = {}): string {
  return JSON.stringify({
    format: STATE_FORMAT,
    version: STATE_VERSION,
    region: top.name,
    upstream: top.upstream,
    savedAt: 1,
    payload: top.payload,
    regions: Object.fromEntries(
      Object.entries(others).map(([name, part]) => [name, { version: STATE_VERSION, savedAt: 1, ...part }]),
    ),
  });
}

describe("the regions' parts of one state file", () => {
  it("saves of two regions' owners and sections at once: the file holds every region's newest part", async () => {
    const path = join(dir, 'concurrent.json');
    claimStateFile(path, [EU, US]);
    const files = [owner(path, EU), owner(path, US)];
    const sections = [section(path, EU), section(path, US)];
    for (const store of [...files, ...sections]) expect(store.loadSync().status).toBe('missing');
    const saves: Promise<void>[] = [];
    for (let i = 1; i <= 40; i++) {
      saves.push(files[i % 2]!.save({ n: i }), sections[(i + 1) % 2]!.save({ m: i }));
    }
    await Promise.all(saves);
    const file = read(path);
    expect(partOf(file, EU.name)).toEqual({ upstream: EU.upstream, payload: { n: 40, workflows: { m: 39 } } });
    expect(partOf(file, US.name)).toEqual({ upstream: US.upstream, payload: { n: 39, workflows: { m: 40 } } });
  });

  it("a fresh file's top level settles on the first configured region, whichever region wrote first", async () => {
    const path = join(dir, 'fresh.json');
    claimStateFile(path, [EU, US]);
    const eu = owner(path, EU);
    const us = owner(path, US);
    for (const store of [eu, us]) expect(store.loadSync().status).toBe('missing');
    await us.save({ n: 1 });
    expect(read(path).region).toBe(US.name);
    await eu.save({ n: 2 });
    const file = read(path);
    expect(file.region).toBe(EU.name);
    expect(partOf(file, US.name)).toEqual({ upstream: US.upstream, payload: { n: 1 } });
    await us.save({ n: 3 });
    expect(read(path).region).toBe(EU.name);
  });

  it('a part written for another token is set aside by a copy of the file; the other region loads and keeps its part', async () => {
    const path = join(dir, 'foreign.json');
    writeFileSync(
      path,
      envelope(
        { ...EU, payload: { n: 7, workflows: { m: 8 } } },
        { [US.name]: { upstream: 'sha256:old', payload: { n: 3 } } },
      ),
    );
    claimStateFile(path, [EU, US]);
    const eu = owner(path, EU);
    const us = owner(path, US);
    expect(eu.loadSync()).toMatchObject({ status: 'loaded', payload: { n: 7 } });
    const usLoad = us.loadSync();
    expect(usLoad).toMatchObject({ status: 'set-aside', reason: 'foreign' });
    const movedTo = (usLoad as { movedTo: string }).movedTo;
    expect(movedTo).toMatch(/foreign\.json\.foreign-us-east-1-\d+$/);
    expect(partOf(read(movedTo), US.name)?.payload).toEqual({ n: 3 });
    expect(existsSync(path)).toBe(true);
    await us.save({ n: 1 });
    const file = read(path);
    expect(partOf(file, EU.name)).toEqual({ upstream: EU.upstream, payload: { n: 7, workflows: { m: 8 } } });
    expect(partOf(file, US.name)).toEqual({ upstream: US.upstream, payload: { n: 1 } });
  });

  it('a region not configured keeps its part byte for byte, also when it held the top level, and is named', async () => {
    const path = join(dir, 'kept.json');
    const usPayload = { n: 5, workflows: { m: 6 } };
    writeFileSync(
      path,
      envelope({ ...US, payload: usPayload }, { [EU.name]: { upstream: EU.upstream, payload: { n: 2 } } }),
    );
    expect(claimStateFile(path, [EU]).kept).toEqual([US.name]);
    const eu = owner(path, EU);
    expect(eu.loadSync()).toMatchObject({ status: 'loaded', payload: { n: 2 } });
    await eu.save({ n: 9 });
    const file = read(path);
    expect(file.region).toBe(EU.name);
    expect(partOf(file, EU.name)?.payload).toEqual({ n: 9 });
    expect(file.regions?.[US.name]).toEqual({
      version: STATE_VERSION,
      upstream: US.upstream,
      savedAt: 1,
      payload: usPayload,
    });

    // Configured again: it resumes from its part.
    expect(claimStateFile(path, [EU, US]).kept).toEqual([]);
    expect(owner(path, US).loadSync()).toMatchObject({ status: 'loaded', payload: { n: 5 } });
    expect(section(path, US).loadSync()).toMatchObject({ status: 'loaded', value: { m: 6 } });
  });
});
