// /metrics: the self registry and every collector's current snapshot, concatenated, in text
// 0.0.4 or, when the scraper asks for it, OpenMetrics (negotiate.ts), served from bytes rendered
// once per poll (exposition.ts). Rendering reads snapshots only; it never calls the upstream
// API. A registry that fails to render is left out (and logged) instead of failing the scrape.

import type { Request, RequestHandler } from 'express';
import type { Logger } from '../logging/index.js';
import { renderOpenMetrics } from '../metrics/openmetrics.js';
import { ExpositionCache, renderText, type ExpositionSources, type NamedRegistry } from './exposition.js';
import { CONTENT_TYPES, negotiateFormat, type ExpositionFormat } from './negotiate.js';
import { errorMessage } from '../common/errors.js';

export type { NamedRegistry } from './exposition.js';

export const METRICS_CONTENT_TYPE = CONTENT_TYPES['text-0.0.4'];

/** The whole exposition rendered now, nothing cached (tests, benchmarks). */
export async function renderMetrics(
  sources: readonly NamedRegistry[],
  logger: Logger,
  format: ExpositionFormat = 'text-0.0.4',
): Promise<string> {
  if (format === 'text-0.0.4') return renderText(sources, logger);
  return renderOpenMetrics(sources, (name, error) => {
    logger.error({ registry: name, err: errorMessage(error) }, 'a registry failed to render; left out of this scrape');
  });
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

/** Serves /metrics from an ExpositionCache (rendered once per poll, see exposition.ts). */
export function metricsHandler(
  sources: ExpositionSources,
  logger: Logger,
  options: MetricsHandlerOptions = {},
): RequestHandler {
  const openMetrics = options.openMetrics ?? true;
  const cache = new ExpositionCache(sources, logger);
  return (req: Request, res, next) => {
    void (async () => {
      const format = negotiateFormat(req.headers.accept, openMetrics);
      const gzip = acceptsGzip(req.headers['accept-encoding']);
      const body = await cache.body(format, gzip);
      res.setHeader('Content-Type', CONTENT_TYPES[format]);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Vary', openMetrics ? 'Accept, Accept-Encoding' : 'Accept-Encoding');
      if (gzip) res.setHeader('Content-Encoding', 'gzip');
      res.setHeader('Content-Length', body.length);
      for (const chunk of body.chunks) res.write(chunk);
      res.end();
    })().catch(next);
  };
}
