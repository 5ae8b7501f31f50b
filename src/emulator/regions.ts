// QStash regions as the emulator names them: the spelling of the account records (`eu-central-1`,
// `us-east-1`), the official SDKs' environment prefix (`EU_CENTRAL_1_QSTASH_TOKEN`) and the
// delivery header (`Upstash-Region: EU-CENTRAL-1`), plus the public development credentials of
// a region that is not the first one (the first keeps the emulator's historic ones).
import { createHash } from 'node:crypto';

/** The region of a single-region emulator, and of the legacy path's user (the EU one). */
export const DEFAULT_REGION = 'eu-central-1';
/** The regions the service runs (upstash/docs qstash/howto/multi-region.mdx): the account lists a user in each. */
export const KNOWN_REGIONS: readonly string[] = Object.freeze(['eu-central-1', 'us-east-1']);

/** Cloud region names: letters, then dash-separated words, ending in a number (`ap-southeast-1`). */
const REGION_NAME = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;

export function isRegionName(text: string): boolean {
  return REGION_NAME.test(text);
}

/** `us-east-1` -> `US_EAST_1`: the prefix of the SDKs' `<REGION>_QSTASH_URL` / `_TOKEN` variables. */
export function regionEnvPrefix(region: string): string {
  return region.toUpperCase().replaceAll('-', '_');
}

/** `us-east-1` -> `US-EAST-1`: the value of the region header on every delivery. */
export function regionHeaderValue(region: string): string {
  return region.toUpperCase();
}

/**
 * Signing keys of a region other than the first, public like the development keys and the same
 * on every start (`sig_` and 28 characters, the service's shape).
 */
export function regionalDevSigningKeys(region: string): { current: string; next: string } {
  const key = (which: string): string =>
    `sig_${createHash('sha256').update(`emulator-signing-key:${region}:${which}`).digest('base64url').slice(0, 28)}`;
  return { current: key('current'), next: key('next') };
}
