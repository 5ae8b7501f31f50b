// The overview section of the landing page (landing.ts): the figures of overview.ts as cards,
// each number with the family it comes from (data-metric), and the plots of the last hour
// (sparkline.ts). Every dynamic value goes through escapeHtml.
import type { CollectorName } from '../collectors/collector.js';
import type { CollectorStatus } from '../collectors/runner.js';
import { escapeHtml, formatDuration, formatNumber } from './html.js';
import { notMeasured } from './collector-problems.js';
import { OVERVIEW_METRICS } from './overview-families.js';
import { OVERVIEW_WINDOW_MS, type Overview, type WindowedCount } from './overview.js';
import { renderPlot } from './sparkline.js';

/** The grey line a card shows instead of figures its collector did not measure. */
function noData(statuses: readonly CollectorStatus[], name: CollectorName): string {
  const why = notMeasured(statuses, name) ?? `the ${name} collector has not reported these figures`;
  return `<p class="nodata" data-nodata="${escapeHtml(name)}">no data: ${escapeHtml(why)}</p>`;
}

/** Whether a card's collector measured its figures (a family at its initial zeros is not a measure). */
function measured(statuses: readonly CollectorStatus[], name: CollectorName): boolean {
  return notMeasured(statuses, name) === null;
}

/**
 * A daily limit that is no limit: the service writes "unlimited" as 2^31 - 1 (the largest
 * 32-bit integer), and the exporter as +Inf or -1.
 */
export function isUnlimited(limit: number): boolean {
  return limit >= 2_147_483_647 || limit < 0;
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
  tone?: 'ok' | 'warn' | 'bad' | 'nodata';
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
  return w.sinceStart
    ? `since the exporter started ${formatDuration(w.windowMs / 1000)} ago`
    : `in the last ${formatDuration(OVERVIEW_WINDOW_MS / 1000)}`;
}

function count(id: string, label: string, value: number | null, metric?: string, tone?: Figure['tone']): Figure {
  return { id, label, value, text: value === null ? 'n/a' : formatNumber(value), metric, tone };
}

function ratioText(part: number, whole: number | null): string {
  if (whole === null || !Number.isFinite(whole) || whole <= 0) return '';
  return ` (${formatNumber(Math.round((part / whole) * 1000) / 10)}%)`;
}

/** The overview section: one card per part of the service (empty ones say why), then the plots. */
export function renderOverview(o: Overview, statuses: readonly CollectorStatus[]): string {
  const m = OVERVIEW_METRICS;
  const cards: string[] = [];
  const nowSeconds = o.now / 1000;

  if (o.deliveries === null || !measured(statuses, 'logs')) cards.push(card('Deliveries', noData(statuses, 'logs')));
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

  if (o.logWalk === null || !measured(statuses, 'logs')) cards.push(card('Log walk', noData(statuses, 'logs')));
  else {
    const w = o.logWalk;
    const lag = w.lagSeconds;
    cards.push(
      card(
        'Log walk',
        `<p class="muted">How far behind the delivery log the counts are, and entries that showed up late.</p>` +
          figures([
            {
              id: 'logs.lag_seconds',
              label: 'lag',
              value: lag,
              text: lag === null ? 'n/a' : formatDuration(lag),
              metric: m.logLag,
              tone: lag !== null && lag > 300 ? 'bad' : undefined,
            },
            count(
              'logs.late_events',
              'late entries (counted)',
              w.lateEvents,
              m.lateEvents,
              (w.lateEvents ?? 0) > 0 ? 'warn' : undefined,
            ),
            count(
              'logs.missed_late_events',
              'late entries missed',
              w.missedLateEvents,
              m.missedLateEvents,
              (w.missedLateEvents ?? 0) > 0 ? 'bad' : 'ok',
            ),
          ]),
      ),
    );
  }

  const dailySource: CollectorName = o.daily?.metric === m.usageDailyRequests ? 'usage' : 'logs';
  if (o.daily === null || !measured(statuses, dailySource))
    cards.push(card('Daily requests', noData(statuses, o.daily === null ? 'usage' : dailySource)));
  else {
    const d = o.daily;
    // Limits the account collector never read are not limits of 0.
    const limitsMeasured = measured(statuses, 'account');
    const limited = (limit: number | null): limit is number => limitsMeasured && limit !== null && !isUnlimited(limit);
    const tone =
      limited(d.hardLimit) && d.requests >= d.hardLimit
        ? 'bad'
        : limited(d.softLimit) && d.requests >= d.softLimit
          ? 'warn'
          : undefined;
    const source =
      d.metric === m.usageDailyRequests
        ? 'requests billed today (UTC)'
        : 'messages accepted today (UTC), from the delivery log';
    const limit = (id: string, label: string, value: number | null, metric: string): Figure =>
      !limitsMeasured || value === null
        ? { id, label, value: null, text: 'no data', metric, tone: 'nodata' }
        : {
            id,
            label,
            value,
            text: isUnlimited(value) ? 'unlimited' : `${formatNumber(value)}${ratioText(d.requests, value)}`,
            metric,
          };
    cards.push(
      card(
        'Daily requests',
        `<p class="muted">${escapeHtml(source)}${d.region === null ? '' : `, region <span data-figure="daily.region">${escapeHtml(d.region === '' ? 'legacy (none)' : d.region)}</span>`}.</p>` +
          figures([
            count('daily.requests', 'today', d.requests, d.metric, tone),
            limit('daily.soft_limit', 'soft limit', d.softLimit, m.softDailyLimit),
            limit('daily.hard_limit', 'hard limit', d.hardLimit, m.hardDailyLimit),
          ]) +
          (d.softLimit === null || !limitsMeasured ? noData(statuses, 'account') : ''),
      ),
    );
  }

  if (o.dlq === null || !measured(statuses, 'dlq')) cards.push(card('Dead-letter queue', noData(statuses, 'dlq')));
  else {
    const oldest = o.dlq.oldestTimestampSeconds;
    cards.push(
      card(
        'Dead-letter queue',
        figures([
          count('dlq.size', 'messages', o.dlq.size, m.dlqSize, o.dlq.size > 0 ? 'warn' : 'ok'),
          {
            id: 'dlq.oldest',
            label: 'oldest',
            value: oldest,
            text: oldest === null ? 'none' : `${formatDuration(nowSeconds - oldest)} old`,
            metric: m.dlqOldest,
          },
        ]),
      ),
    );
  }

  if (o.redis === null || !measured(statuses, 'redis')) cards.push(card('Redis', noData(statuses, 'redis')));
  else {
    const r = o.redis;
    cards.push(
      card(
        'Redis',
        figures([
          count('redis.databases', 'databases', r.databases, m.redisState),
          count('redis.not_active', 'not active', r.notActive, m.redisState, r.notActive > 0 ? 'warn' : 'ok'),
          {
            id: 'redis.monthly_billing',
            label: 'billed this month',
            value: r.monthlyBillingUsd,
            text: `$${formatNumber(Math.round(r.monthlyBillingUsd * 100) / 100)}`,
            metric: m.redisMonthlyBilling,
          },
        ]),
      ),
    );
  }

  if (o.queues === null || !measured(statuses, 'queues')) cards.push(card('Queues', noData(statuses, 'queues')));
  else {
    const q = o.queues;
    const rows = q.largest
      .map(
        (l) =>
          `<tr><td>${escapeHtml(l.queue)}${regionNote(l.region, q.regions)}${l.paused ? ' <span class="warn">(paused)</span>' : ''}</td><td data-figure="queues.backlog" data-queue="${escapeHtml(l.queue)}"${regionAttribute(l.region)} data-value="${l.backlog}" data-metric="${m.queueLag}">${formatNumber(l.backlog)}</td></tr>`,
      )
      .join('');
    cards.push(
      card(
        'Queues',
        `<p class="muted">${q.largest.length === 0 ? `No backlog in ${q.count} queue${q.count === 1 ? '' : 's'}.` : `Largest backlog of ${q.count} queue${q.count === 1 ? '' : 's'}:`}</p>` +
          (rows === ''
            ? ''
            : `<table><thead><tr><th scope="col">queue</th><th scope="col">waiting</th></tr></thead><tbody>${rows}</tbody></table>`),
      ),
    );
  }

  if (o.workflows === null || !measured(statuses, 'workflows'))
    cards.push(card('Workflow runs', noData(statuses, 'workflows')));
  else {
    const w = o.workflows;
    const list: Figure[] = [count('workflows.in_progress', 'in progress', w.inProgress, m.workflowsInProgress)];
    // The total counted (across restarts, from the state file) only where it says more than the
    // window beside it: a window since start that holds every failure is the same number.
    const sameAsWindow = w.failed !== null && w.failed.sinceStart && w.failed.value === w.failedTotal;
    if (!sameAsWindow)
      list.push(
        count(
          'workflows.failed_total',
          'failed (counted in all)',
          w.failedTotal,
          m.workflowRuns,
          (w.failedTotal ?? 0) > 0 ? 'warn' : undefined,
        ),
      );
    if (w.failed !== null)
      list.push(
        count(
          'workflows.failed_window',
          `failed, ${windowLabel(w.failed)}`,
          w.failed.value,
          m.workflowRuns,
          w.failed.value > 0 ? 'bad' : 'ok',
        ),
      );
    if (w.oldestRunAgeSeconds !== null && w.oldestRunAgeSeconds > 0) {
      list.push({
        id: 'workflows.oldest_run_age',
        label: 'oldest in progress',
        value: w.oldestRunAgeSeconds,
        text: formatDuration(w.oldestRunAgeSeconds),
        metric: m.workflowOldestRunAge,
      });
    }
    cards.push(card('Workflow runs', figures(list)));
  }

  // The probe is an active check, off by default: its card shows only where it is enabled.
  if (o.probe !== null) {
    const regions = new Set(o.probe.map((p) => p.region)).size;
    const rows = o.probe.map((p) => {
      const last = p.lastSuccessSeconds;
      const cell = (id: string, value: number, text: string, metric: string, tone?: Figure['tone']): string =>
        `<td data-figure="${escapeHtml(id)}"${regionAttribute(p.region)} data-value="${value}" data-metric="${metric}"${tone === undefined ? '' : ` class="${tone}"`}>${escapeHtml(text)}</td>`;
      return (
        `<tr><th scope="row">${escapeHtml(p.kind)}${regionNote(p.region, regions)}</th>` +
        cell(
          `probe.${p.kind}.success`,
          p.success ? 1 : 0,
          p.success ? 'arrived' : 'failing',
          m.probeSuccess,
          p.success ? 'ok' : 'bad',
        ) +
        cell(
          `probe.${p.kind}.last_success`,
          last ?? 0,
          last === null ? 'never' : `${formatDuration(nowSeconds - last)} ago`,
          m.probeLastSuccess,
        ) +
        (p.deliverySeconds === null
          ? '<td></td>'
          : cell(
              `probe.${p.kind}.delivery_seconds`,
              p.deliverySeconds,
              formatDuration(p.deliverySeconds),
              m.probeDeliveryDuration,
            )) +
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
${o.plots
  .filter((plot) => measured(statuses, plot.id === 'daily-requests' ? dailySource : 'logs'))
  .map(renderPlot)
  .join('\n')}
</div>
</section>`;
}

/** The region beside a row's name, where the rows come from more than one region. */
function regionNote(region: string | null, regions: number): string {
  return region === null || regions < 2 ? '' : ` <span class="muted">${escapeHtml(region)}</span>`;
}

/** The region of a figure, for a reader setting it beside /metrics. */
function regionAttribute(region: string | null): string {
  return region === null ? '' : ` data-region="${escapeHtml(region)}"`;
}
