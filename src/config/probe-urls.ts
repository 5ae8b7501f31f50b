// The URLs the canary probe of a region sends to (src/probe), in one place: the workflows
// collector compares runs against the probe's workflow URL exactly as the probe triggers it.
import type { ExporterConfig } from './schema.js';

/**
 * A probe URL as one region's probe uses it: as configured with one region; with several,
 * `<url>/<region>` (one URL for all would not say whose signing keys to check).
 */
export function probeRegionUrl(url: string, region: string, perRegion: boolean): string {
  return perRegion ? `${url.replace(/\/+$/, '')}/${region}` : url;
}

/** The workflow URL the probe of a region triggers, or null when the probe or its workflow is off. */
export function probeWorkflowUrl(config: ExporterConfig, region: string): string | null {
  const { enabled, workflowUrl } = config.probe;
  if (!enabled || workflowUrl === null) return null;
  return probeRegionUrl(workflowUrl, region, config.qstash.regions.length > 1);
}
