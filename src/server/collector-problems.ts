// The landing page's first section: the collectors that fail now or have never succeeded, each
// with its reason (the runner's sanitized error text) and what to do about it, so a wrong token
// is the first thing a person reads, not a row of the table below the fold. Also what a card
// of the overview says instead of figures its collector never measured.

import type { CollectorName } from '../collectors/collector.js';
import { instanceName, type CollectorStatus } from '../collectors/runner.js';
import { COLLECTOR_NEEDS } from '../config/collector-catalogue.js';
import { escapeHtml, formatDuration } from './html.js';

export interface CollectorProblem {
  name: CollectorName;
  /** The collector and its QStash region as the collectors table names them: `logs (us-east-1)`. */
  instance: string;
  /** `failing since …` or `never succeeded`. */
  state: string;
  /** The last error (`CODE: message`, sanitized by the runner). */
  reason: string;
  /** What to do about it. */
  fix: string;
}

/** The credential a collector polls with, as the user sets it. */
function credentialOf(name: CollectorName): { what: string; settings: string } {
  return COLLECTOR_NEEDS[name] === 'management'
    ? { what: 'the management API email and API key', settings: 'UPSTASH_EMAIL and UPSTASH_API_KEY' }
    : {
        what: 'the QStash token',
        settings: 'QSTASH_TOKEN (or per region EU_CENTRAL_1_QSTASH_TOKEN, US_EAST_1_QSTASH_TOKEN)',
      };
}

/** What to do about the error a collector last reported, from its code (and status). */
export function remedyFor(name: CollectorName, error: string): string {
  const code = /^([A-Z_]+)(?::|$)/.exec(error)?.[1] ?? '';
  const credential = credentialOf(name);
  switch (code) {
    case 'ERR_API_AUTH':
      if (/\(403\)/.test(error))
        return `${credential.what} is accepted but lacks the right to this call: use a credential with access to it (${credential.settings}), or switch the collector off (--disable-collector ${name}).`;
      return `${credential.what} is wrong or lacks the right: set ${credential.settings} to the values of the Upstash console (the QStash token, not a signing key; the management API key of the account's email), then restart the exporter.`;
    case 'ERR_API_NETWORK':
    case 'ERR_API_TIMEOUT':
      return 'the service does not answer in time from here: check the URL (QSTASH_URL, UPSTASH_MANAGEMENT_URL), DNS, the proxy (HTTPS_PROXY) and the firewall.';
    case 'ERR_API_DAILY_LIMIT':
      return "the account's daily request limit is spent: polls resume when it resets (midnight UTC); longer poll intervals spend less.";
    case 'ERR_API_RATE_LIMIT':
      return 'the service asks to slow down: longer poll intervals (--poll-interval), or one exporter per account.';
    case 'ERR_API_NOT_FOUND':
      return 'the service has no such endpoint at the configured URL: check the URL, or switch the collector off if the account lacks the feature.';
    case 'ERR_API_UPSTREAM':
    case 'ERR_API_SCHEMA_DRIFT':
      return 'the service answered something this exporter does not read: the error says what; a redirect or an HTML page means the URL is not the API.';
    default:
      return 'see the error, and the exporter log for its context.';
  }
}

/** Collectors whose last poll failed, or whose polls have all failed: most recent failure first. */
export function collectorProblems(statuses: readonly CollectorStatus[], now: number): CollectorProblem[] {
  return statuses
    .filter((s) => s.enabled && s.lastOutcome === 'failure' && s.lastError !== null)
    .sort((a, b) => Number(a.everSucceeded) - Number(b.everSucceeded) || a.name.localeCompare(b.name))
    .map((s) => ({
      name: s.name,
      instance: instanceName(s.name, s.region),
      state: s.everSucceeded
        ? `failing; last success ${formatDuration((now - (s.lastSuccess ?? now)) / 1000)} ago`
        : 'has never succeeded',
      reason: s.lastError!,
      fix: remedyFor(s.name, s.lastError!),
    }));
}

/**
 * Why a card has no figures from `name`, or null when its collector has measured them (or the
 * view has no status for it). A collector that never succeeded left its families at the zeros
 * they were created with: those are not measurements.
 */
export function notMeasured(statuses: readonly CollectorStatus[], name: CollectorName): string | null {
  const status = statuses.find((s) => s.name === name);
  if (status === undefined) return null;
  if (!status.enabled) return `the ${name} collector is off (${status.disabledReason ?? 'disabled'})`;
  if (status.everSucceeded) return null;
  if (status.lastOutcome === 'failure') return `the ${name} collector has never succeeded (see above)`;
  return `waiting for the first successful poll of the ${name} collector`;
}

/** The section at the top of the page; empty when every collector is fine. */
export function renderProblems(problems: readonly CollectorProblem[]): string {
  if (problems.length === 0) return '';
  const items = problems.map(
    (p) =>
      `<li data-problem="${escapeHtml(p.name)}"><strong>${escapeHtml(p.instance)}</strong> ${escapeHtml(p.state)}: <code>${escapeHtml(p.reason)}</code><br>Fix: ${escapeHtml(p.fix)}</li>`,
  );
  return `<section class="problems" aria-labelledby="problems-heading">
<h2 id="problems-heading">${problems.length === 1 ? 'A collector is failing' : `${problems.length} collectors are failing`}</h2>
<ul>${items.join('')}</ul>
</section>`;
}
