// The environment the demo's exporter is configured from: what an app in migration mode has.
import { regionEnvPrefix, type EmulatorHandle } from '../emulator/index.js';

/**
 * The environment the demo's exporter reads its QStash regions and management credentials from:
 * the official SDKs' migration-mode variables the banner prints (QSTASH_REGION and every region's
 * <REGION>_QSTASH_URL, _TOKEN, _CURRENT_SIGNING_KEY, _NEXT_SIGNING_KEY), plus UPSTASH_EMAIL and
 * UPSTASH_API_KEY, as a user pastes an app's `.env`. Nothing of the user's own environment.
 */
export function exporterEnvironment(emulator: EmulatorHandle): Record<string, string> {
  const env: Record<string, string> = {
    QSTASH_REGION: regionEnvPrefix(emulator.regions[0]!.name),
    UPSTASH_EMAIL: emulator.credentials.email,
    UPSTASH_API_KEY: emulator.credentials.apiKey,
  };
  for (const region of emulator.regions) {
    const prefix = regionEnvPrefix(region.name);
    const keys = region.signingKeys();
    env[`${prefix}_QSTASH_URL`] = region.url;
    env[`${prefix}_QSTASH_TOKEN`] = region.credentials.token;
    env[`${prefix}_QSTASH_CURRENT_SIGNING_KEY`] = keys.current;
    env[`${prefix}_QSTASH_NEXT_SIGNING_KEY`] = keys.next;
  }
  return env;
}
