// A metric family as data, declared once where the family is made: its name, type, labels,
// meaning and source. The code creates its prom-client metric from it (`metricOptions`: the
// HELP is the meaning), docs/metrics.md's tables are written from it
// (src/metrics-doc.ts) and the tests read their lists of families from it. The
// collectors' families and the exporter's own (self-families.ts) are declared this way.

export type FamilyType = 'gauge' | 'counter' | 'histogram';

export interface Family<L extends string = string> {
  readonly name: string;
  readonly type: FamilyType;
  readonly labelNames: readonly L[];
  /** What the value is, with its unit where the name does not carry one; plain text (the HELP). */
  readonly meaning: string;
  /** Where the value comes from: the upstream field(s) and endpoint, or the exporter's own part. */
  readonly source: string;
  /** Docs only: markdown after the meaning (values, caveats, links) too long or too linked for a HELP. */
  readonly details?: string;
  /** Docs only: the values a label takes, written next to it (`result` (`success`, `error`)). */
  readonly labelValues?: Partial<Readonly<Record<L, readonly string[]>>>;
  /** Labels added only when the user opts in (not in labelNames). */
  readonly optInLabels?: readonly string[];
}

/** Alias kept for the docs and the tests, which read families as rows of a table. */
export type FamilyRow = Family;

/** A family's HELP text: its meaning, one line. */
export function helpOf(family: Pick<Family, 'meaning'>): string {
  return family.meaning;
}

/** The name, HELP and label names of a prom-client metric created from `family`. */
export function metricOptions<L extends string>(
  family: Family<L>,
): { name: string; help: string; labelNames: readonly L[] } {
  return { name: family.name, help: helpOf(family), labelNames: family.labelNames };
}

/** The rows of a FAMILIES record (or list), in declaration order. */
export function familyRows(families: Readonly<Record<string, Family>> | readonly Family[]): Family[] {
  return Object.values(families);
}
