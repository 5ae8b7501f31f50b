// docs/metrics.md's family tables, written from the families the collectors declare
// (family-catalogue.ts), as docs/configuration.md's settings table is from the settings. A
// section holds its table between `<!-- families: <collector> -->` and `<!-- /families -->`;
// `npm run docs:metrics` rewrites them, test/collectors/families-doc.test.ts keeps them equal.

import type { FamilyRow } from './families.js';
import { FAMILY_CATALOGUE } from './family-catalogue.js';

const code = (text: string): string => `\`${text}\``;
const cell = (text: string): string => text.replaceAll('|', '\\|');

/** The markdown table of `rows`: metric, type, labels, meaning, source. */
export function familiesTableMarkdown(rows: readonly FamilyRow[]): string {
  const lines = ['| metric | type | labels | meaning | source |', '|---|---|---|---|---|'];
  for (const row of rows) {
    lines.push(
      `| ${code(row.name)} | ${row.type} | ${row.labelNames.map(code).join(', ')} | ${cell(row.meaning)} | ${cell(row.source)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

const BLOCK = /(<!-- families: ([a-z_]+) -->\n)[\s\S]*?(<!-- \/families -->)/g;

/** `doc` with every generated block rewritten from the catalogue; throws on an unknown collector. */
export function renderMetricsDoc(doc: string): string {
  return doc.replace(BLOCK, (_all, open: string, collector: string, close: string) => {
    const rows = (FAMILY_CATALOGUE as Record<string, readonly FamilyRow[] | undefined>)[collector];
    if (rows === undefined) throw new Error(`docs/metrics.md names collector ${collector}, which declares no families`);
    return `${open}\n${familiesTableMarkdown(rows)}\n${close}`;
  });
}

/** The collectors whose tables `doc` holds as generated blocks. */
export function generatedSections(doc: string): string[] {
  return [...doc.matchAll(BLOCK)].map((match) => match[2]!);
}
