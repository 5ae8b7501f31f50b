// A metric family as data: its name, type, labels, meaning and source, as the docs tables
// (docs/metrics.md, written by families-doc.ts) and the tests read them. The collectors declare
// their families as GaugeSpec objects (or field specs); these helpers turn them into rows.

import type { GaugeSpec } from './inventory/gauges.js';

export type FamilyType = 'gauge' | 'counter' | 'histogram';

export interface FamilyRow {
  name: string;
  type: FamilyType;
  labelNames: readonly string[];
  /** What the value is, with its unit where the name does not carry one. */
  meaning: string;
  /** Where the value comes from: the upstream field(s) and endpoint. */
  source: string;
}

/** Rows of gauge families declared as GaugeSpec objects (a FAMILIES record or a list). */
export function gaugeRows(
  specs: Readonly<Record<string, GaugeSpec<string>>> | readonly GaugeSpec<string>[],
): FamilyRow[] {
  return Object.values(specs).map((spec) => ({
    name: spec.name,
    type: 'gauge',
    labelNames: spec.labelNames,
    meaning: spec.meaning,
    source: spec.source,
  }));
}

/** Rows of gauges that read one field of a record each (`<field> of <endpoint>`). */
export function fieldRows(
  specs: readonly { name: string; field: string; meaning: string }[],
  labelNames: readonly string[],
  endpoint: string,
): FamilyRow[] {
  return specs.map((spec) => ({
    name: spec.name,
    type: 'gauge',
    labelNames,
    meaning: spec.meaning,
    source: `${spec.field} of ${endpoint}`,
  }));
}
