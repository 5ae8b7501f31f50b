// The families every collector declares (src/collectors/family-catalogue.ts, the data
// docs/metrics.md's tables are written from), by collector.
import type { CollectorName } from '../../src/collectors/collector.js';
import { FAMILY_CATALOGUE } from '../../src/collectors/family-catalogue.js';

export interface DocumentedFamily {
  /** The collector that serves the family. */
  collector: CollectorName;
  name: string;
  /** `gauge`, `counter`, `histogram` */
  type: string;
  labels: string[];
}

export function documentedFamilies(): DocumentedFamily[] {
  return Object.entries(FAMILY_CATALOGUE).flatMap(([collector, rows]) =>
    rows.map((row) => ({
      collector: collector as CollectorName,
      name: row.name,
      type: row.type,
      labels: [...row.labelNames],
    })),
  );
}
