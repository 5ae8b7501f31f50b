// A metric family as data (src/metrics/families.ts: name, type, labels, meaning, source), as the
// docs tables (docs/metrics.md, written by src/metrics-doc.ts) and the tests read them. The inventory
// collectors declare their gauges as GaugeSpec objects (or field specs), which carry no type
// (all gauges); these helpers turn them into rows. The logs and workflows collectors and the
// self metrics declare Family objects directly.

import type { GaugeSpec } from './inventory/gauges.js';
import type { FamilyRow } from '../metrics/families.js';

export { familyRows, type FamilyRow, type FamilyType } from '../metrics/families.js';

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
