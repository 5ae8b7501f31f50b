// The families docs/metrics.md lists for the inventory collectors, parsed from its tables.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const INVENTORY_SECTIONS = [
  'Schedules',
  'Queues',
  'URL Groups',
  'Dead-letter queue',
  'Flow control',
  'Account and plan limits',
  'Search indexes',
  'Official QStash usage',
  'Vector indexes',
] as const;

export interface DocumentedFamily {
  section: (typeof INVENTORY_SECTIONS)[number];
  name: string;
  /** `gauge`, `counter`, ... (the "(1)" of info gauges dropped). */
  type: string;
  /** Label names from the `{...}` after the name or the labels column; [] when none are given. */
  labels: string[];
}

const METRICS_DOC = fileURLToPath(new URL('../../docs/metrics.md', import.meta.url));

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
}

/** Backticked names outside parentheses: "`schedule_id`, `state` (`IN_PROGRESS`, ...)" -> schedule_id, state. */
function labelNames(text: string): string[] {
  return [...text.replace(/\([^)]*\)/g, '').matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1]!);
}

export function documentedFamilies(text: string = readFileSync(METRICS_DOC, 'utf8')): DocumentedFamily[] {
  const families: DocumentedFamily[] = [];
  for (const block of text.split(/^## /m).slice(1)) {
    const heading = block.slice(0, block.indexOf('\n'));
    const section = INVENTORY_SECTIONS.find((s) => heading.startsWith(s));
    if (section === undefined) continue;
    const rows = block.split('\n').filter((line) => line.trim().startsWith('|'));
    if (rows.length < 3) throw new Error(`section ${heading}: no table`);
    const header = cells(rows[0]!).map((c) => c.toLowerCase());
    const metricCol = header.indexOf('metric');
    const typeCol = header.indexOf('type');
    const labelsCol = header.indexOf('labels');
    if (metricCol < 0 || typeCol < 0) throw new Error(`section ${heading}: table without metric/type columns`);
    for (const row of rows.slice(2)) {
      const columns = cells(row);
      const match = /^`([a-z_:][a-z0-9_:]*)(?:\{([^}]*)\})?`$/.exec(columns[metricCol] ?? '');
      if (!match) throw new Error(`section ${heading}: cannot read metric cell ${columns[metricCol]}`);
      const inline =
        match[2]
          ?.split(',')
          .map((l) => l.trim())
          .filter(Boolean) ?? [];
      const fromColumn = labelsCol >= 0 ? labelNames(columns[labelsCol] ?? '') : [];
      families.push({
        section,
        name: match[1]!,
        type: (columns[typeCol] ?? '').replace(/\s*\(.*\)$/, ''),
        labels: inline.length > 0 ? inline : fromColumn,
      });
    }
  }
  return families;
}
