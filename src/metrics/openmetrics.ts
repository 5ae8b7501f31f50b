// OpenMetrics 1.0 rendering of prom-client registries, with what prom-client 15 leaves out:
// `<name>_created` samples for counters and histograms, exemplars on histogram buckets, and
// one `# EOF` for a whole concatenation of registries. The text 0.0.4 path is untouched
// (registry.metrics()); this module only runs when a scraper asked for OpenMetrics.
//
// Where a created time comes from, per series:
// - a value that carries `created` (unix seconds): the logs collector's families, whose
//   created times are kept in the checkpoint (src/collectors/walk/families.ts);
// - otherwise the source's `createdOf(family)`: the self registry answers the process start for
//   families that start at 0 with the process;
// - otherwise none: no `_created` line. OpenMetrics makes it optional, and a made-up time
//   (restore time, say) would make a counter that continues across a restart look reset to a
//   Prometheus that ingests created timestamps.
//
// Series names are the same as in text 0.0.4 (counters are named `*_total`, so the OpenMetrics
// family is the name without the suffix and its samples keep the name). Label values too, except
// `le` (and `quantile`), which OpenMetrics wants in its canonical float form: `1.0` where text
// 0.0.4 has `1`. Prometheus 3 stores that form from either format; Prometheus 2 stores what it
// reads, so there a bucket with an integral bound changes identity when the format changes.
import type { Registry } from 'prom-client';
import { registryLabelsOf } from './default-labels.js';

/** An exemplar as prom-client shapes it: label set, observed value, unix seconds. */
export interface OpenMetricsExemplar {
  labelSet: Readonly<Record<string, string>>;
  value: number;
  timestamp?: number;
}

export interface OpenMetricsValue {
  labels: Readonly<Record<string, string | number>>;
  value: number;
  metricName?: string;
  /** When the series was created, unix seconds (counters: every value; histograms: on `_count`). */
  created?: number;
  exemplar?: OpenMetricsExemplar | null;
}

export interface OpenMetricsFamily {
  name: string;
  help: string;
  type: string;
  values: readonly OpenMetricsValue[];
}

/** A metric object may offer this to be rendered with created times and exemplars. */
export interface OpenMetricsSource {
  getForOpenMetrics(): Promise<OpenMetricsFamily>;
}

export interface OpenMetricsRegistry {
  name: string;
  registry: Registry;
  /** Created time (unix seconds) of every series of a family whose values carry none. */
  createdOf?: (family: string) => number | undefined;
}

/** When this process started, unix seconds. */
export const PROCESS_START_SECONDS = performance.timeOrigin / 1000;

/**
 * `createdOf` for a registry whose series all start at 0 with the process (so the process
 * start is an honest created time), except the families named in `continued` (values carried
 * over from a checkpoint), which get none.
 */
export function createdAtProcessStart(continued: readonly string[] = []): (family: string) => number | undefined {
  const skip = new Set(continued);
  return (family) => (skip.has(family) ? undefined : PROCESS_START_SECONDS);
}

/** The combined length of an exemplar's label names and values, in code points (spec limit). */
export const EXEMPLAR_LABELS_MAX_CHARS = 128;

export const OPENMETRICS_EOF = '# EOF\n';

/** Renders the registries as one OpenMetrics exposition; `onError` gets each registry that failed (left out). */
export async function renderOpenMetrics(
  sources: readonly OpenMetricsRegistry[],
  onError: (name: string, error: unknown) => void,
): Promise<string> {
  return (await renderOpenMetricsFamilies(sources, onError)) + OPENMETRICS_EOF;
}

/** The registries' families in OpenMetrics, without the closing `# EOF`: a part of an exposition. */
export async function renderOpenMetricsFamilies(
  sources: readonly OpenMetricsRegistry[],
  onError: (name: string, error: unknown) => void,
): Promise<string> {
  const parts = await Promise.all(
    sources.map(async (source) => {
      try {
        const families = await Promise.all(source.registry.getMetricsAsArray().map((metric) => familyOf(metric)));
        const labels = registryLabelsOf(source.registry);
        return families.map((family) => familyParts(family, source.createdOf, labels));
      } catch (error) {
        onError(source.name, error);
        return [];
      }
    }),
  );
  // A family in several registries (one collector in each region) is one family: its metadata
  // once, the samples of every registry after it.
  const merged = new Map<string, { head: string; samples: string }>();
  for (const part of parts.flat()) {
    const found = merged.get(part.name);
    if (found === undefined) merged.set(part.name, { head: part.head, samples: part.samples });
    else found.samples += part.samples;
  }
  let out = '';
  for (const { head, samples } of merged.values()) out += head + samples;
  return out;
}

function familyOf(metric: unknown): Promise<OpenMetricsFamily> {
  const source = metric as Partial<OpenMetricsSource> & { get(): Promise<OpenMetricsFamily> };
  return typeof source.getForOpenMetrics === 'function' ? source.getForOpenMetrics() : source.get();
}

/** One family: HELP, TYPE and its samples; a histogram's `_created` follows each series' `_count`. */
export function renderFamily(family: OpenMetricsFamily, createdOf?: (family: string) => number | undefined): string {
  const { head, samples } = familyParts(family, createdOf);
  return head + samples;
}

/**
 * A family's metadata and its samples, apart; `registryLabels` (the registry's default labels)
 * go on every sample, as prom-client's text output puts them.
 */
function familyParts(
  family: OpenMetricsFamily,
  createdOf?: (family: string) => number | undefined,
  registryLabels?: Readonly<Record<string, string>>,
): { name: string; head: string; samples: string } {
  const fallback = createdOf?.(family.name);
  let type = family.type;
  let familyName = family.name;
  if (type === 'counter') {
    // A counter named without `_total` would get a new sample name in OpenMetrics; keep the
    // series as it is in text 0.0.4 and call it unknown instead.
    if (familyName.endsWith('_total')) familyName = familyName.slice(0, -'_total'.length);
    else type = 'unknown';
  } else if (type !== 'gauge' && type !== 'histogram' && type !== 'summary') {
    type = 'unknown';
  }
  // Metadata in the order the spec prefers: TYPE, UNIT (when the name ends in a base unit), HELP.
  let out = `# TYPE ${familyName} ${type}\n`;
  const unit = UNIT_SUFFIX.exec(familyName)?.[1];
  if (unit !== undefined) out += `# UNIT ${familyName} ${unit}\n`;
  out += `# HELP ${familyName} ${escapeText(family.help)}\n`;
  const head = out;
  out = '';
  const countName = `${family.name}_count`;
  for (const value of family.values) {
    const name = value.metricName ?? family.name;
    const labels = labelsText(registryLabels === undefined ? value.labels : { ...value.labels, ...registryLabels });
    out += `${name}${labels} ${numberText(value.value)}`;
    if (value.exemplar !== undefined && value.exemplar !== null) out += exemplarText(value.exemplar);
    out += '\n';
    const created = value.created ?? fallback;
    if (created === undefined) continue;
    if (type === 'counter') out += `${familyName}_created${labels} ${numberText(created)}\n`;
    else if (type === 'histogram' && name === countName)
      out += `${family.name}_created${labels} ${numberText(created)}\n`;
  }
  return { name: familyName, head, samples: out };
}

function labelsText(labels: Readonly<Record<string, string | number>>): string {
  let out = '';
  for (const name in labels) {
    const value = labels[name]!;
    let text: string;
    if (typeof value === 'number')
      text = name === 'le' || name === 'quantile' ? canonicalNumber(value) : numberText(value);
    else text = escapeText(value);
    out += `${out === '' ? '{' : ','}${name}="${text}"`;
  }
  return out === '' ? '' : `${out}}`;
}

/**
 * The spec's canonical rendering of `le` and `quantile` values: Go's shortest %g (exponent form
 * below 1e-4 and from 1e+06, two-digit exponent) with `.0` added to an integral value.
 */
export function canonicalNumber(value: number): string {
  if (!Number.isFinite(value)) return numberText(value);
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${exponent < 0 ? '-' : '+'}${digits}`;
  }
  const text = String(value);
  return text.includes('.') ? text : `${text}.0`;
}

/** ` # {labels} value timestamp`, or nothing when the label set is over the spec's limit. */
function exemplarText(exemplar: OpenMetricsExemplar): string {
  let chars = 0;
  for (const [name, value] of Object.entries(exemplar.labelSet)) chars += [...name].length + [...value].length;
  if (chars > EXEMPLAR_LABELS_MAX_CHARS) return '';
  let out = ` # ${labelsText(exemplar.labelSet) || '{}'} ${numberText(exemplar.value)}`;
  if (exemplar.timestamp !== undefined) out += ` ${numberText(exemplar.timestamp)}`;
  return out;
}

/** Base units the exporter's names end in; the spec wants them as UNIT metadata. */
const UNIT_SUFFIX = /_(seconds|bytes)$/;

const NEEDS_ESCAPE = /[\\\n"]/;

/** Label values and HELP text: backslash, newline and double quote escaped. */
function escapeText(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
