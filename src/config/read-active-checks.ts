// Settings of the active checks (probe, remediation) that need the whole configuration:
// credentials, signing keys, paths the exporter's own server answers, alert names.
import { ConfigError, quoteValue } from './errors.js';
import { z } from 'zod';
import type { Kind } from './kinds.js';
import { originOf, type Sources } from './precedence.js';
import type { ExporterConfig } from './schema.js';
import { DEFAULT_REMEDIATION_ALERTS } from './setting-spec.js';
import { asUniqueList } from './values.js';

/** Shortest remediation bearer token accepted (characters). */
export const MIN_BEARER_TOKEN_CHARS = 32;
/** Fewest different characters in an accepted token (32 random hex digits have about 14). */
const MIN_BEARER_TOKEN_DISTINCT_CHARS = 8;

/**
 * Why a bearer token cannot guard the public webhook, or null: too short, too few different
 * characters (`aaaa...`), or a short piece repeated (`abcabc...`). Never quotes the token.
 */
export function bearerTokenWeakness(token: string): string | null {
  const chars = [...token];
  if (chars.length < MIN_BEARER_TOKEN_CHARS)
    return `the token has ${chars.length} characters, fewer than ${MIN_BEARER_TOKEN_CHARS}`;
  const distinct = new Set(chars).size;
  if (distinct < MIN_BEARER_TOKEN_DISTINCT_CHARS)
    return `the token is weak: it uses ${distinct} different character${distinct === 1 ? '' : 's'}, fewer than ${MIN_BEARER_TOKEN_DISTINCT_CHARS}`;
  for (let period = 1; period <= chars.length / 2; period++) {
    if (chars.every((char, i) => i < period || char === chars[i - period]))
      return `the token is weak: a piece of ${period} characters repeated`;
  }
  return null;
}

/** What Prometheus accepts as an alert name (a metric name). */
const ALERT_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*$/;

/**
 * Paths the exporter's own server answers, and everything under `/-/` (its admin paths, the
 * remediation webhook included): the probe receiver must not shadow them.
 */
function isReservedServerPath(path: string): boolean {
  return ['/', '/metrics', '/healthz', '/readyz'].includes(path.replace(/\/+$/, '') || '/') || path.startsWith('/-/');
}

/** Checks of the active checks that need the whole configuration (credentials, keys). */
export function checkActiveChecks(
  sources: Sources,
  config: Pick<ExporterConfig, 'qstash' | 'probe' | 'remediation'>,
): void {
  const { qstash, probe, remediation } = config;
  const tokenHint = 'set QSTASH_TOKEN (or QSTASH_TOKEN_FILE, --qstash-token)';
  if (probe.enabled) {
    const origin = originOf(sources, 'probe.enabled');
    if (qstash.regions.length === 0)
      throw new ConfigError(
        'probe.enabled',
        `${origin} turns the probe on, but enqueueing needs the QStash token; ${tokenHint} or turn the probe off`,
      );
    if (probe.receiverUrl === null) {
      throw new ConfigError(
        'probe.receiver_url',
        `${origin} turns the probe on without PROBE_RECEIVER_URL; set it (or --probe-receiver-url) to the public URL at which the service reaches this exporter's ${probe.receiverPath}`,
      );
    }
    const keyless = qstash.regions.find((region) => region.currentSigningKey === null);
    if (keyless !== undefined && !probe.insecureReceiver) {
      const which = qstash.regions.length === 1 ? '' : ` for ${keyless.name} (<REGION>_QSTASH_CURRENT_SIGNING_KEY)`;
      throw new ConfigError(
        'qstash_current_signing_key',
        `${origin}: the probe receiver is reachable without basic auth, so it verifies the service's signature; set QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY${which} (console: QStash > Signing keys), or --probe-insecure-receiver for a test setup`,
      );
    }
    if (isReservedServerPath(probe.receiverPath)) {
      throw new ConfigError(
        'probe.receiver_path',
        `${originOf(sources, 'probe.receiver_path')}: ${quoteValue(probe.receiverPath)} is one of the exporter's own paths; choose another, e.g. /probe/receive`,
      );
    }
  }
  if (remediation.enabled) {
    const origin = originOf(sources, 'remediation.enabled');
    if (qstash.regions.length === 0)
      throw new ConfigError(
        'remediation.enabled',
        `${origin} turns remediation on, but pausing schedules needs the QStash token; ${tokenHint} or turn remediation off`,
      );
    if (remediation.bearerToken === null) {
      throw new ConfigError(
        'remediation.bearer_token',
        `${origin} turns remediation on without REMEDIATION_BEARER_TOKEN; set it (or REMEDIATION_BEARER_TOKEN_FILE, --remediation-bearer-token-file) to the secret Alertmanager sends`,
      );
    }
    // The webhook is reachable without basic auth: a short or trivial token falls to guessing.
    const weakness = bearerTokenWeakness(remediation.bearerToken);
    if (weakness !== null) {
      throw new ConfigError(
        'remediation.bearer_token',
        `${originOf(sources, 'remediation.bearer_token')}: ${weakness}; use a random one, e.g. openssl rand -hex 32`,
      );
    }
  }
}

/** The alert names remediation acts on: never empty, each a Prometheus alert name. */
export const remediationAlerts: Kind<string[]> = {
  read: (spec, sources) => {
    const { key } = spec;
    const raw = sources.givenOrDefault(spec);
    const alerts = asUniqueList(key, raw, 'a list of alert names', (name) => {
      if (!ALERT_NAME.test(name))
        throw new ConfigError(
          key,
          `${raw.origin}: ${quoteValue(name)} is not an alert name; alert names use letters, digits, _ and :, e.g. ${DEFAULT_REMEDIATION_ALERTS[0]}`,
        );
      return name;
    });
    if (alerts.length === 0)
      throw new ConfigError(
        key,
        `${raw.origin} is empty; list the alert names remediation acts on, e.g. ${DEFAULT_REMEDIATION_ALERTS[0]}`,
      );
    return alerts;
  },
  check: z.array(z.string().regex(ALERT_NAME)).min(1),
  render: (alerts) => alerts,
};
