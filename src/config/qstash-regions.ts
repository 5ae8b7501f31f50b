// The QStash regions the service runs (upstash/docs qstash/howto/multi-region.mdx) and how the
// SDKs name them in the environment (@upstash/qstash, src/client/multi-region/utils.ts:
// `QSTASH_REGION=US_EAST_1`, `US_EAST_1_QSTASH_TOKEN`, `US_EAST_1_QSTASH_URL`, ...). Plain data.

export interface KnownQStashRegion {
  /** As the account records spell it, and the value of the `qstash_region` label. */
  name: string;
  /** The SDKs' spelling, the prefix of the region's variables (`EU_CENTRAL_1_QSTASH_TOKEN`). */
  envPrefix: string;
  /** The region's public URL, used when `<REGION>_QSTASH_URL` is not set. */
  publicUrl: string;
}

export const KNOWN_QSTASH_REGIONS: readonly KnownQStashRegion[] = [
  { name: 'eu-central-1', envPrefix: 'EU_CENTRAL_1', publicUrl: 'https://qstash.upstash.io' },
  { name: 'us-east-1', envPrefix: 'US_EAST_1', publicUrl: 'https://qstash-us-east-1.upstash.io' },
];

/** The SDKs' default region: where a token of unknown region is assumed to live. */
export const DEFAULT_QSTASH_REGION = 'eu-central-1';

/** A region name written either way (`us-east-1`, `US_EAST_1`, any case); undefined when unknown. */
export function knownQStashRegion(text: string): KnownQStashRegion | undefined {
  const normal = text.trim().toLowerCase().replaceAll('_', '-');
  return KNOWN_QSTASH_REGIONS.find((region) => region.name === normal);
}

/** The per-region variable of a region: `US_EAST_1_QSTASH_TOKEN` for (us-east-1, QSTASH_TOKEN). */
export function regionVariable(region: KnownQStashRegion, variable: string): string {
  return `${region.envPrefix}_${variable}`;
}
