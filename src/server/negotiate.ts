// Content negotiation of /metrics: which exposition format an Accept header asks for. The
// scraper's preference wins (highest q, then the order of the header); text 0.0.4 is the
// answer to anything else, to no header, and whenever OpenMetrics is switched off.
// Prometheus 2.42 sends
//   application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,
//   text/plain;version=0.0.4;q=0.5,*/*;q=0.1

export type ExpositionFormat = 'text-0.0.4' | 'openmetrics-1.0.0' | 'openmetrics-0.0.1';

export const CONTENT_TYPES: Readonly<Record<ExpositionFormat, string>> = {
  'text-0.0.4': 'text/plain; version=0.0.4; charset=utf-8',
  'openmetrics-1.0.0': 'application/openmetrics-text; version=1.0.0; charset=utf-8',
  'openmetrics-0.0.1': 'application/openmetrics-text; version=0.0.1; charset=utf-8',
};

export const DEFAULT_FORMAT: ExpositionFormat = 'text-0.0.4';

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
  order: number;
}

/** The format to answer with; `openMetrics: false` always gives text 0.0.4. */
export function negotiateFormat(accept: string | undefined, openMetrics: boolean): ExpositionFormat {
  if (!openMetrics || accept === undefined || accept.trim() === '') return DEFAULT_FORMAT;
  const ranges = parseAccept(accept).sort((a, b) => b.q - a.q || a.order - b.order);
  for (const range of ranges) {
    if (range.q <= 0) break;
    const format = formatOf(range);
    if (format !== null) return format;
  }
  return DEFAULT_FORMAT;
}

function formatOf(range: MediaRange): ExpositionFormat | null {
  const version = range.params.get('version');
  switch (range.type) {
    case 'application/openmetrics-text':
      if (version === undefined || version === '1.0.0') return 'openmetrics-1.0.0';
      if (version === '0.0.1') return 'openmetrics-0.0.1';
      return null;
    case 'text/plain':
      return version === undefined || version === '0.0.4' ? 'text-0.0.4' : null;
    case 'text/*':
    case '*/*':
      return 'text-0.0.4';
    default:
      return null;
  }
}

/** Media ranges with lower-cased type and parameter names; q outside [0, 1] or unreadable is 0. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  let order = 0;
  for (const item of header.split(',')) {
    const [rawType = '', ...rawParams] = item.split(';');
    const type = rawType.trim().toLowerCase();
    if (type === '') continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const param of rawParams) {
      const eq = param.indexOf('=');
      if (eq < 0) continue;
      const name = param.slice(0, eq).trim().toLowerCase();
      const value = param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (name === 'q') {
        const parsed = Number(value);
        q = value !== '' && Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0;
      } else {
        params.set(name, value);
      }
    }
    ranges.push({ type, params, q, order: order++ });
  }
  return ranges;
}
