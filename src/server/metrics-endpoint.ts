// /metrics: the self registry and every collector's current snapshot, rendered and concatenated,
// in text 0.0.4 or, when the scraper asks for it, OpenMetrics (negotiate.ts). Rendering reads
// snapshots only; it never calls the upstream API. A registry that fails to render is left out
// (and logged) instead of failing the whole scrape.

import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../logging/index.js';
import { renderOpenMetrics, type OpenMetricsRegistry } from '../metrics/openmetrics.js';
import { CONTENT_TYPES, negotiateFormat, type ExpositionFormat } from './negotiate.js';

export const METRICS_CONTENT_TYPE = CONTENT_TYPES['text-0.0.4'];

const gzipAsync = promisify(gzip);

/** A registry on /metrics; `createdOf` gives the OpenMetrics created time of families whose values carry none. */
export type NamedRegistry = OpenMetricsRegistry;

export async function renderMetrics(sources: readonly NamedRegistry[], logger: Logger, format: ExpositionFormat = 'text-0.0.4'): Promise<string> {
  if (format !== 'text-0.0.4') {
    return renderOpenMetrics(sources, (name, error) => {
      logger.error({ registry: name, error: error instanceof Error ? error.message : String(error) }, 'a registry failed to render; left out of this scrape');
    });
  }
  const parts = await Promise.all(
    sources.map(async ({ name, registry }) => {
      try {
        return await registry.metrics();
      } catch (error) {
        logger.error({ registry: name, error: error instanceof Error ? error.message : String(error) }, 'a registry failed to render; left out of this scrape');
        return '';
      }
    }),
  );
  return parts
    .filter((part) => part.trim() !== '')
    .map((part) => (part.endsWith('\n') ? part : `${part}\n`))
    .join('');
}

/**
 * Whether an Accept-Encoding header allows gzip: `gzip` (or `x-gzip`) with q > 0, or `*` with
 * q > 0 when gzip is not refused explicitly.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  let gzipQ: number | undefined;
  let starQ: number | undefined;
  for (const item of header.split(',')) {
    const [coding = '', ...params] = item.trim().toLowerCase().split(';');
    let q = 1;
    for (const param of params) {
      const [k, v] = param.trim().split('=');
      if (k === 'q' && v !== undefined) q = Number(v);
    }
    if (!Number.isFinite(q)) q = 0;
    if (coding === 'gzip' || coding === 'x-gzip') gzipQ = Math.max(gzipQ ?? 0, q);
    else if (coding === '*') starQ = q;
  }
  if (gzipQ !== undefined) return gzipQ > 0;
  return starQ !== undefined && starQ > 0;
}

export interface MetricsHandlerOptions {
  /** Answer OpenMetrics when the Accept header prefers it (default true); false: text 0.0.4 only. */
  openMetrics?: boolean;
}

export function metricsHandler(sources: () => readonly NamedRegistry[], logger: Logger, options: MetricsHandlerOptions = {}): RequestHandler {
  const openMetrics = options.openMetrics ?? true;
  return (req: Request, res, next) => {
    void (async () => {
      const format = negotiateFormat(req.headers.accept, openMetrics);
      const body = Buffer.from(await renderMetrics(sources(), logger, format), 'utf8');
      res.setHeader('Content-Type', CONTENT_TYPES[format]);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Vary', openMetrics ? 'Accept, Accept-Encoding' : 'Accept-Encoding');
      if (acceptsGzip(req.headers['accept-encoding'])) {
        res.setHeader('Content-Encoding', 'gzip');
        res.send(await gzipAsync(body));
      } else {
        res.send(body);
      }
    })().catch(next);
  };
}
