// The bytes of /metrics, kept between scrapes. Collector snapshots and the self metrics change
// when a poll ends, not when someone scrapes, so rendering them anew for every scrape only
// costs CPU: under a flood of scrapes that starved the polls. The exposition is split in two:
//
// - the cached part: registries that change only with polls (the self registry, every
//   collector's). Rendered once per format (text 0.0.4, OpenMetrics) and kept, with its gzip
//   form made on first demand, until the view's generation moves (a poll ended, a scheduled
//   poll was skipped or missed), one of its registries is swapped for another, or MAX_AGE_MS
//   passed: a few gauges are computed from the clock at render time (log lag, age of the oldest
//   message in flight) and must not freeze while a poll hangs.
// - the live part: registries marked `live` (process and Node.js metrics, the active checks'
//   counters, which move with incoming requests), small, rendered on every scrape and
//   appended.
//
// gzip without compressing the cached part again: its deflate stream ends with a sync flush
// (byte-aligned, not final), the live part's deflate stream is appended with the final block,
// and the trailer's CRC-32 continues the cached part's. One standard gzip member.

import { constants, crc32, deflateRaw } from 'node:zlib';
import { promisify } from 'node:util';
import type { Logger } from '../logging/index.js';
import { OPENMETRICS_EOF, renderOpenMetricsFamilies, type OpenMetricsRegistry } from '../metrics/openmetrics.js';
import type { ExpositionFormat } from './negotiate.js';
import { errorMessage } from '../common/errors.js';

const deflateRawAsync = promisify(deflateRaw);

/** Longest time the part that changes with polls is served without a render, ms (clock-derived gauges). */
export const MAX_AGE_MS = 5_000;
/**
 * Longest time the live part is served without a render, ms: a scraper every few seconds gets
 * it fresh each time, a flood of scrapes gets it rendered once a second.
 */
export const LIVE_MAX_AGE_MS = 1_000;

/** gzip member header: magic, deflate, no flags, no mtime, no extra flags, OS unix. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03]);

/** A registry on /metrics. */
export interface NamedRegistry extends OpenMetricsRegistry {
  /**
   * Its values change between polls (process metrics, counters of incoming requests): rendered
   * on every scrape instead of cached.
   */
  live?: boolean;
}

export interface ExpositionSources {
  /** Registries in the order they are shown (the live ones end up after the cached ones). */
  registries(): readonly NamedRegistry[];
  /** Moves whenever a cached registry may show something new; absent: nothing is cached. */
  generation?(): number;
}

type Renderer = 'text' | 'openmetrics';

interface GzipPiece {
  /** Head: the gzip header and a deflate stream ending with a sync flush; tail: a deflate stream with the final block. */
  bytes: Buffer;
  /** CRC-32 of the text (of the head: the trailer's continues it over the tail). */
  crc: number;
  length: number;
}

interface CachedPart {
  generation: number | undefined;
  registries: readonly NamedRegistry['registry'][];
  renderedAt: number;
  text: Promise<Buffer>;
  /** The gzip pieces of this part, made on the first scrape that asks for gzip. */
  gzip?: Promise<GzipPiece>;
}

export interface ExpositionBody {
  /** The response body, in order. */
  chunks: Buffer[];
  length: number;
}

export class ExpositionCache {
  readonly #sources: ExpositionSources;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #parts = new Map<string, CachedPart>();

  constructor(sources: ExpositionSources, logger: Logger, now: () => number = Date.now) {
    this.#sources = sources;
    this.#logger = logger;
    this.#now = now;
  }

  /** The body of one scrape in `format`, gzip-encoded when `gzip`. */
  async body(format: ExpositionFormat, gzip: boolean): Promise<ExpositionBody> {
    const renderer: Renderer = format === 'text-0.0.4' ? 'text' : 'openmetrics';
    const all = this.#sources.registries();
    const generation = this.#sources.generation?.();
    const head = this.#part(
      `${renderer} polled`,
      renderer,
      all.filter((source) => source.live !== true),
      { generation, maxAgeMs: MAX_AGE_MS },
    );
    const tail = this.#part(
      `${renderer} live`,
      renderer,
      all.filter((source) => source.live === true),
      { generation: 0, maxAgeMs: LIVE_MAX_AGE_MS },
    );
    const [headText, tailText] = await Promise.all([head.text, tail.text]);
    if (!gzip) return { chunks: [headText, tailText], length: headText.length + tailText.length };
    head.gzip ??= head.text.then(gzipPrefix);
    tail.gzip ??= tail.text.then(gzipEnd);
    const [prefix, end] = await Promise.all([head.gzip, tail.gzip]);
    const trailer = Buffer.alloc(8);
    // crc32 of an empty buffer without backing store answers 0, not the value passed in.
    trailer.writeUInt32LE(tailText.length === 0 ? prefix.crc : crc32(tailText, prefix.crc), 0);
    trailer.writeUInt32LE((prefix.length + tailText.length) % 2 ** 32, 4);
    return {
      chunks: [prefix.bytes, end.bytes, trailer],
      length: prefix.bytes.length + end.bytes.length + trailer.length,
    };
  }

  /**
   * The rendered part of `sources` under `key`: the kept one while the generation (undefined:
   * never the same), the registries and the age allow, otherwise a new render.
   */
  #part(
    key: string,
    renderer: Renderer,
    sources: readonly NamedRegistry[],
    validity: { generation: number | undefined; maxAgeMs: number },
  ): CachedPart {
    const registries = sources.map((source) => source.registry);
    const now = this.#now();
    const previous = this.#parts.get(key);
    if (
      previous !== undefined &&
      validity.generation !== undefined &&
      previous.generation === validity.generation &&
      now - previous.renderedAt < validity.maxAgeMs &&
      sameItems(previous.registries, registries)
    ) {
      return previous;
    }
    const eof = renderer === 'openmetrics' && key.endsWith('live') ? OPENMETRICS_EOF : '';
    // Stored before the render ends: the scrapes arriving meanwhile wait for this one render.
    const part: CachedPart = {
      generation: validity.generation,
      registries,
      renderedAt: now,
      text: this.#render(renderer, sources).then((text) => Buffer.from(text + eof, 'utf8')),
    };
    part.text.catch(() => {
      if (this.#parts.get(key) === part) this.#parts.delete(key);
    });
    this.#parts.set(key, part);
    return part;
  }

  #render(renderer: Renderer, sources: readonly NamedRegistry[]): Promise<string> {
    if (sources.length === 0) return Promise.resolve('');
    return renderer === 'text'
      ? renderText(sources, this.#logger)
      : renderOpenMetricsFamilies(sources, (name, error) => this.#logFailure(name, error));
  }

  #logFailure(name: string, error: unknown): void {
    this.#logger.error(
      { registry: name, err: errorMessage(error) },
      'a registry failed to render; left out of this scrape',
    );
  }
}

/** The registries in text 0.0.4, concatenated; a registry that fails is left out and logged. */
export async function renderText(sources: readonly NamedRegistry[], logger: Logger): Promise<string> {
  const parts = await Promise.all(
    sources.map(async ({ name, registry }) => {
      try {
        return await registry.metrics();
      } catch (error) {
        logger.error(
          { registry: name, err: errorMessage(error) },
          'a registry failed to render; left out of this scrape',
        );
        return '';
      }
    }),
  );
  return mergeTextFamilies(parts.filter((part) => part.trim() !== ''));
}

/**
 * Registries' text 0.0.4 as one exposition: a family found in several registries (a collector
 * in each region) is one family, its HELP and TYPE once and the samples of each registry after.
 */
export function mergeTextFamilies(parts: readonly string[]): string {
  const families = new Map<string, string[]>();
  let current: string[] = [];
  for (const part of parts) {
    for (const line of part.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) {
        const name = line.slice(7, line.indexOf(' ', 7) === -1 ? undefined : line.indexOf(' ', 7));
        const found = families.get(name);
        if (found === undefined) {
          current = [line];
          families.set(name, current);
        } else {
          current = found;
          if (!found.includes(line) && !found.some((kept) => kept.startsWith(line.slice(0, 7 + name.length + 1))))
            found.splice(1, 0, line);
        }
        continue;
      }
      current.push(line);
    }
  }
  let out = '';
  for (const lines of families.values()) out += `${lines.join('\n')}\n`;
  return out;
}

async function gzipPrefix(text: Buffer): Promise<GzipPiece> {
  const deflated = await deflateRawAsync(text, { finishFlush: constants.Z_SYNC_FLUSH });
  return { bytes: Buffer.concat([GZIP_HEADER, deflated]), crc: crc32(text), length: text.length };
}

/** The deflate stream of the live part, with the final block: follows the head's. */
async function gzipEnd(text: Buffer): Promise<GzipPiece> {
  return { bytes: await deflateRawAsync(text), crc: crc32(text), length: text.length };
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
