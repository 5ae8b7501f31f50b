// docs/metrics.md's family tables, written from the families the collectors, the self metrics
// (src/collectors/family-catalogue.ts), the canary probe and remediation declare, as
// docs/configuration.md's settings table is from the settings. A section holds its table between
// `<!-- families: <table> -->` and `<!-- /families -->`; `npm run docs:metrics` rewrites them,
// test/system/metrics-doc.test.ts keeps them equal. It sits above the probe and remediation
// (which sit beside the server) to read their families; only the docs generator and the tests
// import it.

import { FAMILY_TABLES } from './collectors/family-catalogue.js';
import { familyRows, type FamilyRow } from './metrics/families.js';
import { PROBE_FAMILIES } from './probe/families.js';
import { REMEDIATION_FAMILIES } from './remediation/families.js';

/** Every generated table of docs/metrics.md by block name; each family is in exactly one. */
export const METRICS_DOC_TABLES: Readonly<Record<string, readonly FamilyRow[]>> = {
  ...FAMILY_TABLES,
  probe: familyRows(PROBE_FAMILIES),
  remediation: familyRows(REMEDIATION_FAMILIES),
};

const code = (text: string): string => `\`${text}\``;
const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The markdown table of `rows`: metric, type, labels, meaning, source. */
export function familiesTableMarkdown(rows: readonly FamilyRow[]): string {
  const lines = ['| metric | type | labels | meaning | source |', '|---|---|---|---|---|'];
  for (const row of rows) {
    lines.push(
      `| ${code(row.name)} | ${row.type} | ${cell(labelsCell(row))} | ${cell(meaningCell(row))} | ${cell(row.source)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `a`, `b` (`x`, `y`) (+ opt-in `c`): label names, the values a label takes, the opt-in labels. */
function labelsCell(row: FamilyRow): string {
  const values = row.labelValues;
  const labels = row.labelNames.map((name) => {
    const known = values?.[name];
    return known === undefined ? code(name) : `${code(name)} (${known.map(code).join(', ')})`;
  });
  const optIn = row.optInLabels === undefined ? '' : ` (+ opt-in ${row.optInLabels.map(code).join(', ')})`;
  return `${labels.join(', ')}${optIn}`;
}

/** The meaning, then the docs-only details. */
function meaningCell(row: FamilyRow): string {
  if (row.details === undefined) return row.meaning;
  return `${row.meaning}${row.meaning.endsWith('.') ? '' : '.'} ${row.details}`;
}

const BLOCK = /(<!-- families: ([a-z_]+) -->\n)[\s\S]*?(<!-- \/families -->)/g;

/** `doc` with every generated block rewritten from the families; throws on an unknown table. */
export function renderMetricsDoc(doc: string): string {
  return doc.replace(BLOCK, (_all, open: string, table: string, close: string) => {
    const rows = METRICS_DOC_TABLES[table];
    if (rows === undefined) throw new Error(`docs/metrics.md names family table ${table}, which no one declares`);
    return `${open}\n${familiesTableMarkdown(rows)}\n${close}`;
  });
}

/** The tables `doc` holds as generated blocks, by name. */
export function generatedSections(doc: string): string[] {
  return [...doc.matchAll(BLOCK)].map((match) => match[2]!);
}
