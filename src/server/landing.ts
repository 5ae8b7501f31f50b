// The landing page at `/`: an overview of what the exporter sees (overview.ts, drawn as cards
// by overview-cards.ts), small plots of the last hour (sparkline.ts), each collector's state, and
// links; above them the collectors that fail (collector-problems.ts). Every dynamic value goes
// through escapeHtml; error texts are already sanitized by the runner (no secrets). The page has
// no script and loads nothing but itself again (a meta refresh): its one stylesheet is inline
// and allowed by its hash in LANDING_CSP, which forbids everything else.

import { instanceName } from '../collectors/runner.js';
import { createHash } from 'node:crypto';
import type { CollectorStatus } from '../collectors/runner.js';
import { escapeHtml } from './html.js';
import type { Overview } from './overview.js';
import { collectorProblems, renderProblems } from './collector-problems.js';
import { renderOverview } from './overview-cards.js';

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
  if (status.overdue) return 'failing: the poll runs past its deadline, still polling';
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
.nodata { color: var(--muted); font-style: italic; }
.problems { border: 2px solid var(--bad); border-radius: .5rem; padding: .25rem 1rem; margin: 1rem 0; }
.problems h2 { color: var(--bad); margin-top: .5rem; } .problems li { margin: .5rem 0; }
.refresh { font-size: .85rem; }
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

/** How often the page reloads itself (a meta refresh: no script), s. */
export const LANDING_REFRESH_SECONDS = 30;

export function renderLanding(input: LandingInput): string {
  const renderedAt = new Date(input.now).toISOString();
  const rows = input.statuses
    .map((s) => {
      const cells = [
        instanceName(s.name, s.region),
        stateOf(s),
        interval(s),
        s.enabled ? when(s.lastSuccess, input.now) : '',
        s.lastDuration === null ? '' : `${s.lastDuration.toFixed(3)} s`,
        s.lastError === null ? '' : `${s.lastError} (${when(s.lastErrorAt, input.now)})`,
        s.summary ?? '',
      ];
      const cls = !s.enabled
        ? 'off'
        : s.lastOutcome === 'failure'
          ? 'bad'
          : s.lastOutcome === 'success'
            ? 'ok'
            : 'wait';
      return `<tr class="${cls}">${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${LANDING_REFRESH_SECONDS}">
<title>Upstash Exporter</title>
<style>${STYLESHEET}</style>
</head>
<body>
<h1>Upstash Exporter</h1>
<p>Version ${escapeHtml(input.version)}. ${input.ready ? 'Ready: every enabled collector has succeeded at least once.' : 'Not ready yet: waiting for the first successful poll of every enabled collector.'}</p>
<p class="refresh muted" data-refresh-seconds="${LANDING_REFRESH_SECONDS}">This page reloads itself every ${LANDING_REFRESH_SECONDS} s; rendered at <time datetime="${escapeHtml(renderedAt)}">${escapeHtml(renderedAt.slice(11, 19))} UTC</time>.</p>
<nav><a href="metrics">Metrics</a> <a href="-/healthy">Health</a> <a href="-/ready">Readiness</a></nav>
${renderProblems(collectorProblems(input.statuses, input.now))}
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
