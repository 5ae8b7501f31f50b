// The SLO spec a user edits: Sloth's `prometheus/v1` format (version, service, labels, slos with
// an events or raw SLI and page/ticket alerting), read strictly: an unknown key, a missing
// `{{.window}}` or an objective out of range is one line naming the key (ConfigError, exit 2).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../config/errors.js';

/** Sloth's template variable, replaced by each window (5m, 1h, ...) in the SLI queries. */
export const WINDOW_VARIABLE = '{{.window}}';

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const labels = z
  .record(z.string(), z.string())
  .refine(
    (record) => Object.keys(record).every((name) => LABEL_NAME.test(name)),
    'label names are [a-zA-Z_][a-zA-Z0-9_]*',
  )
  .optional();
const query = z
  .string()
  .trim()
  .min(1)
  .refine((text) => text.includes(WINDOW_VARIABLE), `must use ${WINDOW_VARIABLE} for the window`);

const AlertSchema = z
  .strictObject({
    disable: z.boolean().optional(),
    labels,
    annotations: labels,
  })
  .optional();

const SloSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower case letters, digits and dashes'),
  objective: z.number().gt(0).lt(100, 'must be below 100 (an objective of 100% leaves no error budget)'),
  description: z.string().optional(),
  labels,
  sli: z
    .strictObject({
      events: z.strictObject({ error_query: query, total_query: query }).optional(),
      raw: z.strictObject({ error_ratio_query: query }).optional(),
    })
    .refine((sli) => (sli.events === undefined) !== (sli.raw === undefined), 'needs exactly one of events or raw'),
  alerting: z.strictObject({
    name: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'an alert name in CamelCase'),
    labels,
    annotations: labels,
    page_alert: AlertSchema,
    ticket_alert: AlertSchema,
  }),
});

const SpecSchema = z.strictObject({
  version: z.literal('prometheus/v1'),
  service: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower case letters, digits and dashes'),
  labels,
  slos: z
    .array(SloSchema)
    .min(1)
    .refine((slos) => new Set(slos.map((slo) => slo.name)).size === slos.length, 'SLO names must be unique'),
});

export type SloSpec = z.infer<typeof SpecSchema>;
export type Slo = SloSpec['slos'][number];

/** `slos[0].sli.events` from a zod path. */
function keyOf(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

/** Validates a parsed spec; `source` names it in error messages. */
export function parseSloSpec(value: unknown, source: string): SloSpec {
  const result = SpecSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0] ?? ''] : issue.path;
    const key = keyOf(path);
    const message = issue.code === 'unrecognized_keys' ? 'unknown key' : issue.message;
    throw new ConfigError(key, `SLO spec ${source}: ${key === '' ? '' : `${key}: `}${message}`);
  }
  return result.data;
}

/** Reads and validates a spec file. */
export function loadSloSpec(file: string): SloSpec {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      'spec',
      `SLO spec ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new ConfigError('spec', `SLO spec ${file}: not YAML (${(error as Error).message})`);
  }
  return parseSloSpec(value, file);
}
