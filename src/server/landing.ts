// The landing page at `/`: an overview of what the exporter sees (overview.ts), small plots of
// the last hour (sparkline.ts), each collector's state, and links. Every dynamic value goes
// through escapeHtml; error texts are already sanitized by the runner (no secrets). The page
// has no script and loads nothing: its one stylesheet is inline and allowed by its hash in
// LANDING_CSP, which forbids everything else.

import { createHash } from 'node:crypto';
import type { CollectorName } from '../collectors/collector.js';
import type { CollectorStatus } from '../collectors/runner.js';
import { escapeHtml, formatDuration, formatNumber } from './html.js';
import { OVERVIEW_METRICS, OVERVIEW_WINDOW_MS, type Overview, type WindowedCount } from './overview.js';
import { renderPlot } from './sparkline.js';

export { escapeHtml } from './html.js';

export interface LandingInput {
  version: string;
  statuses: readonly CollectorStatus[];
  ready: boolean;
  now: number;
  /** Null leaves the overview out (a view without registries to read). */
  overview?: Overview | null;
}

function when(ms: number | null, now: number): string {
  if (ms === null) return 'never';
  const ago = Math.max(0, Math.round((now - ms) / 1000));
  return `${new Date(ms).toISOString()} (${ago} s ago)`;
}

function stateOf(status: CollectorStatus): string {
  if (!status.enabled) return `disabled: ${status.disabledReason ?? 'off'}`;
  const outcome =
    status.lastOutcome === null ? 'waiting for the first poll' : status.lastOutcome === 'success' ? 'ok' : 'failing';
  return status.running ? `${outcome}, polling now` : outcome;
}

function interval(status: CollectorStatus): string {
  return status.intervalMs === null ? '' : `${status.intervalMs / 1000} s`;
}


const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1d1f23; --muted: #5c6370; --bg: #fff; --card: #f5f6f8; --line: #d0d4da;
  --ok: #186a1e; --warn: #8a5a00; --bad: #b00020; --s0: #1f6feb; --s1: #c62828; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --muted: #9aa3ae; --bg: #14161a; --card: #1e2127; --line: #3a3f47;
    --ok: #5cc36a; --warn: #e0a83a; --bad: #ff6b6b; --s0: #6aa7ff; --s1: #ff7b72; }
}
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 0 auto; padding: 1rem; max-width: 72rem; color: var(--fg); background: var(--bg); line-height: 1.4; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; } h3 { font-size: 1rem; margin: 0 0 .25rem; }
a { color: var(--s0); }
nav a { margin-right: 1rem; }
.muted { color: var(--muted); font-weight: normal; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: .75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; }
.card p { margin: .25rem 0; font-size: .9rem; }
@media (min-width: 40rem) { .card.wide { grid-column: span 2; } }
.card table { font-size: .85rem; width: 100%; } .card th, .card td { padding: .2em .4em; }
dl.figures { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; margin: .5rem 0 0; }
dl.figures dt { font-size: .8rem; color: var(--muted); }
dl.figures dd { margin: 0; font-size: 1.35rem; font-variant-numeric: tabular-nums; }
.ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); font-weight: bold; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: .75rem; margin-top: .75rem; }
figure.plot { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; }
figure.plot figcaption { font-size: .9rem; }
figure.plot svg { display: block; width: 100%; height: 4rem; margin: .5rem 0; }
polyline { fill: none; stroke-width: 2; } polyline.s0 { stroke: var(--s0); } polyline.s1 { stroke: var(--s1); }
line.axis { stroke: var(--line); stroke-width: 1; }
.key::before { content: ""; display: inline-block; width: .8em; height: .2em; margin: 0 .25em .2em .5em; vertical-align: middle; }
.key.s0::before { background: var(--s0); } .key.s1::before { background: var(--s1); }
details { font-size: .85rem; } details table { margin-top: .25rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: .3em .6em; text-align: left; vertical-align: top; }
tr.ok td:nth-child(2) { color: var(--ok); }
tr.bad td:nth-child(2) { color: var(--bad); font-weight: bold; }
tr.off td { color: var(--muted); }
`;

/**
 * The page's Content-Security-Policy: nothing may load, not even from this server, and no
 * script runs; only the inline stylesheet above, by its hash. Inline SVG needs no img-src.
 */
export const LANDING_CSP = [
  "default-src 'none'",
  `style-src '${'sha256-' + createHash('sha256').update(STYLESHEET).digest('base64')}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Which collector feeds each overview card, to say why a card is empty. */
function absence(statuses: readonly CollectorStatus[], name: CollectorName): string {
  const status = statuses.find((s) => s.name === name);
  if (status === undefined || !status.enabled) return `No data: the ${name} collector is disabled${status?.disabledReason ? ` (${status.disabledReason})` : ''}.`;
  if (!status.everSucceeded) return `No data yet: waiting for the first successful poll of the ${name} collector.`;
  return `No data from the ${name} collector.`;
}

interface Figure {
  /** Stable name of the figure (data-figure), for tests and for a reader of the source. */
  id: string;
  label: string;
  /** The number behind the text, as /metrics shows it. */
  value: number | null;
  text: string;
  /** The family the value comes from. */
  metric?: string;
  tone?: 'ok' | 'warn' | 'bad';
}

function figures(list: readonly Figure[]): string {
  const items = list.map((f) => {
    const attributes = [
      `data-figure="${escapeHtml(f.id)}"`,
      f.value === null ? '' : `data-value="${escapeHtml(String(f.value))}"`,
      f.metric === undefined ? '' : `data-metric="${escapeHtml(f.metric)}"`,
      f.tone === undefined ? '' : `class="${f.tone}"`,
    ].filter((a) => a !== '');
    return `<div><dt>${escapeHtml(f.label)}</dt><dd ${attributes.join(' ')}>${escapeHtml(f.text)}</dd></div>`;
  });
  return `<dl class="figures">${items.join('')}</dl>`;
}

function card(title: string, body: string, wide = false): string {
  return `<article class="card${wide ? ' wide' : ''}"><h3>${escapeHtml(title)}</h3>${body}</article>`;
}

/** The window in a few words: `last 5 min`, or `since start` when the exporter is younger. */
function windowLabel(w: WindowedCount): string {
  if (w.windowMs === 0) return 'counted so far';
  return w.sinceStart ? 'since start' : `last ${formatDuration(OVERVIEW_WINDOW_MS / 1000)}`;
}

/** The window in a sentence. */
function windowText(w: WindowedCount): string {
  if (w.windowMs === 0) return 'all counted so far';
  return w.sinceStart ? `since the exporter started ${formatDuration(w.windowMs / 1000)} ago` : `in the last ${formatDuration(OVERVIEW_WINDOW_MS / 1000)}`;
}

function count(id: string, label: string, value: number | null, metric?: string, tone?: Figure['tone']): Figure {
  return { id, label, value, text: value === null ? 'n/a' : formatNumber(value), metric, tone };
}

function ratioText(part: number, whole: number | null): string {
  if (whole === null || !Number.isFinite(whole) || whole <= 0) return '';
  return ` (${formatNumber(Math.round((part / whole) * 1000) / 10)}%)`;
}

function renderOverview(o: Overview, statuses: readonly CollectorStatus[]): string {
  const m = OVERVIEW_METRICS;
  const cards: string[] = [];
  const nowSeconds = o.now / 1000;

  if (o.deliveries === null) cards.push(card('Deliveries', `<p class="muted">${escapeHtml(absence(statuses, 'logs'))}</p>`));
  else {
    const d = o.deliveries;
    const ratio = d.failureRatio;
    cards.push(
      card(
        'Deliveries',
        `<p class="muted">Messages that reached a final state ${escapeHtml(windowText(d.delivered))}.</p>` +
          figures([
            count('deliveries.delivered', 'delivered', d.delivered.value, m.events),
            count('deliveries.failed', 'failed', d.failed.value, m.events, d.failed.value > 0 ? 'bad' : 'ok'),
            count('deliveries.cancelled', 'cancelled', d.cancelled.value, m.events),
            {
              id: 'deliveries.failure_ratio',
              label: 'failure ratio',
              value: ratio,
              text: ratio === null ? 'n/a' : `${formatNumber(Math.round(ratio * 1000) / 10)}%`,
              tone: ratio === null ? undefined : ratio > 0.05 ? 'bad' : ratio > 0 ? 'warn' : 'ok',
            },
          ]),
      ),
    );
  }

  if (o.logWalk === null) cards.push(card('Log walk', `<p class="muted">${escapeHtml(absence(statuses, 'logs'))}</p>`));
  else {
    const w = o.logWalk;
    const lag = w.lagSeconds;
    cards.push(
      card(
        'Log walk',
        `<p class="muted">How far behind the delivery log the counts are, and entries that showed up late.</p>` +
          figures([
            { id: 'logs.lag_seconds', label: 'lag', value: lag, text: lag === null ? 'n/a' : formatDuration(lag), metric: m.logLag, tone: lag !== null && lag > 300 ? 'bad' : undefined },
            count('logs.late_events', 'late entries (counted)', w.lateEvents, m.lateEvents, (w.lateEvents ?? 0) > 0 ? 'warn' : undefined),
            count('logs.missed_late_events', 'late entries missed', w.missedLateEvents, m.missedLateEvents, (w.missedLateEvents ?? 0) > 0 ? 'bad' : 'ok'),
          ]),
      ),
    );
  }

  if (o.daily === null) cards.push(card('Daily requests', `<p class="muted">${escapeHtml(absence(statuses, 'usage'))}</p>`));
  else {
    const d = o.daily;
    const tone = d.hardLimit !== null && d.requests >= d.hardLimit ? 'bad' : d.softLimit !== null && d.requests >= d.softLimit ? 'warn' : undefined;
    const source = d.metric === m.usageDailyRequests ? 'requests billed today (UTC)' : 'messages accepted today (UTC), from the delivery log';
    const limit = (id: string, label: string, value: number | null, metric: string): Figure => ({
      id,
      label,
      value,
      text: value === null ? 'unknown' : `${formatNumber(value)}${ratioText(d.requests, value)}`,
      metric,
    });
    cards.push(
      card(
        'Daily requests',
        `<p class="muted">${escapeHtml(source)}${d.region === null ? '' : `, region <span data-figure="daily.region">${escapeHtml(d.region === '' ? 'legacy (none)' : d.region)}</span>`}.</p>` +
          figures([
            count('daily.requests', 'today', d.requests, d.metric, tone),
            limit('daily.soft_limit', 'soft limit', d.softLimit, m.softDailyLimit),
            limit('daily.hard_limit', 'hard limit', d.hardLimit, m.hardDailyLimit),
          ]) +
          (d.softLimit === null ? `<p class="muted">${escapeHtml(absence(statuses, 'account'))}</p>` : ''),
      ),
    );
  }

  if (o.dlq === null) cards.push(card('Dead-letter queue', `<p class="muted">${escapeHtml(absence(statuses, 'dlq'))}</p>`));
  else {
    const oldest = o.dlq.oldestTimestampSeconds;
    cards.push(
      card(
        'Dead-letter queue',
        figures([
          count('dlq.size', 'messages', o.dlq.size, m.dlqSize, o.dlq.size > 0 ? 'warn' : 'ok'),
          { id: 'dlq.oldest', label: 'oldest', value: oldest, text: oldest === null ? 'none' : `${formatDuration(nowSeconds - oldest)} old`, metric: m.dlqOldest },
        ]),
      ),
    );
  }

  if (o.queues === null) cards.push(card('Queues', `<p class="muted">${escapeHtml(absence(statuses, 'queues'))}</p>`));
  else {
    const q = o.queues;
    const rows = q.largest
      .map((l) => `<tr><td>${escapeHtml(l.queue)}${l.paused ? ' <span class="warn">(paused)</span>' : ''}</td><td data-figure="queues.backlog" data-queue="${escapeHtml(l.queue)}" data-value="${l.backlog}" data-metric="${m.queueLag}">${formatNumber(l.backlog)}</td></tr>`)
      .join('');
    cards.push(
      card(
        'Queues',
        `<p class="muted">${q.largest.length === 0 ? `No backlog in ${q.count} queue${q.count === 1 ? '' : 's'}.` : `Largest backlog of ${q.count} queue${q.count === 1 ? '' : 's'}:`}</p>` +
          (rows === '' ? '' : `<table><thead><tr><th scope="col">queue</th><th scope="col">waiting</th></tr></thead><tbody>${rows}</tbody></table>`),
      ),
    );
  }

  if (o.workflows === null) cards.push(card('Workflow runs', `<p class="muted">${escapeHtml(absence(statuses, 'workflows'))}</p>`));
  else {
    const w = o.workflows;
    const list: Figure[] = [
      count('workflows.in_progress', 'in progress', w.inProgress, m.workflowsInProgress),
      count('workflows.failed_total', 'failed (counted in all)', w.failedTotal, m.workflowRuns, (w.failedTotal ?? 0) > 0 ? 'warn' : undefined),
    ];
    if (w.failed !== null) list.push(count('workflows.failed_window', `failed, ${windowLabel(w.failed)}`, w.failed.value, m.workflowRuns, w.failed.value > 0 ? 'bad' : 'ok'));
    if (w.oldestRunAgeSeconds !== null && w.oldestRunAgeSeconds > 0) {
      list.push({ id: 'workflows.oldest_run_age', label: 'oldest in progress', value: w.oldestRunAgeSeconds, text: formatDuration(w.oldestRunAgeSeconds), metric: m.workflowOldestRunAge });
    }
    cards.push(card('Workflow runs', figures(list)));
  }

  // The probe is an active check, off by default: its card shows only where it is enabled.
  if (o.probe !== null) {
    const cell = (id: string, value: number, text: string, metric: string, tone?: Figure['tone']): string =>
      `<td data-figure="${escapeHtml(id)}" data-value="${value}" data-metric="${metric}"${tone === undefined ? '' : ` class="${tone}"`}>${escapeHtml(text)}</td>`;
    const rows = o.probe.map((p) => {
      const last = p.lastSuccessSeconds;
      return (
        `<tr><th scope="row">${escapeHtml(p.kind)}</th>` +
        cell(`probe.${p.kind}.success`, p.success ? 1 : 0, p.success ? 'arrived' : 'failing', m.probeSuccess, p.success ? 'ok' : 'bad') +
        cell(`probe.${p.kind}.last_success`, last ?? 0, last === null ? 'never' : `${formatDuration(nowSeconds - last)} ago`, m.probeLastSuccess) +
        (p.deliverySeconds === null ? '<td></td>' : cell(`probe.${p.kind}.delivery_seconds`, p.deliverySeconds, formatDuration(p.deliverySeconds), m.probeDeliveryDuration)) +
        '</tr>'
      );
    });
    cards.push(
      card(
        'Canary probe',
        `<p class="muted">A message sent through the service to the exporter itself.</p>` +
          `<div class="scroll"><table><thead><tr><th scope="col">probe</th><th scope="col">last run</th><th scope="col">last success</th><th scope="col">took</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`,
        true,
      ),
    );
  }

  return `<section aria-labelledby="overview-heading">
<h2 id="overview-heading">Overview</h2>
<div class="cards">
${cards.join('\n')}
</div>
<div class="plots">
${o.plots.map(renderPlot).join('\n')}
</div>
</section>`;
}

export function renderLanding(input: LandingInput): string {
  const rows = input.statuses
    .map((s) => {
      const cells = [
        s.name,
        stateOf(s),
        interval(s),
        s.enabled ? when(s.lastSuccess, input.now) : '',
        s.lastDuration === null ? '' : `${s.lastDuration.toFixed(3)} s`,
        s.lastError === null ? '' : `${s.lastError} (${when(s.lastErrorAt, input.now)})`,
        s.summary ?? '',
      ];
      const cls = !s.enabled ? 'off' : s.lastOutcome === 'failure' ? 'bad' : s.lastOutcome === 'success' ? 'ok' : 'wait';
      return `<tr class="${cls}">${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Upstash Exporter</title>
<style>${STYLESHEET}</style>
</head>
<body>
<h1>Upstash Exporter</h1>
<p>Version ${escapeHtml(input.version)}. ${input.ready ? 'Ready: every enabled collector has succeeded at least once.' : 'Not ready yet: waiting for the first successful poll of every enabled collector.'}</p>
<nav><a href="metrics">Metrics</a> <a href="-/healthy">Health</a> <a href="-/ready">Readiness</a></nav>
${input.overview == null ? '' : renderOverview(input.overview, input.statuses)}
<h2>Collectors</h2>
<div class="scroll"><table>
<thead><tr><th>collector</th><th>state</th><th>interval</th><th>last success</th><th>last duration</th><th>last error</th><th>seen</th></tr></thead>
<tbody>
${rows}
</tbody>
</table></div>
</body>
</html>
`;
}
