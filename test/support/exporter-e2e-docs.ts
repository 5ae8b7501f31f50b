// The families the inventory collectors declare (src/collectors/family-catalogue.ts, the data
// docs/metrics.md's tables are written from), by section of docs/metrics.md.
import type { CollectorName } from '../../src/collectors/collector.js';
import { FAMILY_CATALOGUE } from '../../src/collectors/family-catalogue.js';

/** The docs/metrics.md section of each collector that declares its families. */
const SECTION_OF = {
  schedules: 'Schedules',
  queues: 'Queues',
  url_groups: 'URL Groups',
  dlq: 'Dead-letter queue',
  flow_control: 'Flow control',
  account: 'Account and plan limits',
  search: 'Search indexes',
  usage: 'Official QStash usage',
  vector: 'Vector indexes',
  redis: 'Redis databases',
} as const satisfies Partial<Record<CollectorName, string>>;

export const INVENTORY_SECTIONS = Object.values(SECTION_OF);

export interface DocumentedFamily {
  section: (typeof INVENTORY_SECTIONS)[number];
  /** The collector that serves the family. */
  collector: keyof typeof SECTION_OF;
  name: string;
  /** `gauge`, `counter`, ... */
  type: string;
  labels: string[];
}

export function documentedFamilies(): DocumentedFamily[] {
  return Object.entries(FAMILY_CATALOGUE).flatMap(([collector, rows]) => {
    const section = SECTION_OF[collector as keyof typeof SECTION_OF];
    if (section === undefined) throw new Error(`collector ${collector} declares families but has no docs section here`);
    return rows.map((row) => ({
      section,
      collector: collector as keyof typeof SECTION_OF,
      name: row.name,
      type: row.type,
      labels: [...row.labelNames],
    }));
  });
}
