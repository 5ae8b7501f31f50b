// The last check of loadConfig: the assembled configuration against each setting row's check
// (settings.ts), so the shape the rest of the exporter relies on holds. The readers give the
// friendly messages; a failure here is a defect of the exporter.

import { z } from 'zod';
import { COLLECTOR_NAMES } from './collector-catalogue.js';
import { ConfigError } from './errors.js';
import type { ConfigPath, ExporterConfig } from './schema.js';
import { SETTINGS } from './settings.js';

export function valueAt(object: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], object);
}

export function setValueAt(object: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  const last = parts.pop()!;
  let node = object;
  for (const part of parts) node = (node[part] ??= {}) as Record<string, unknown>;
  node[last] = value;
}

const CollectorSchema = z.strictObject({
  enabled: z.boolean(),
  intervalMs: z.number().int().min(1),
  disabledReason: z.string().nullable(),
});

/** Paths of the configuration no setting row fills by itself. */
const ASSEMBLED = ['collectors', 'http.proxy.environment', 'qstash.regions'];

const RegionSchema = z.strictObject({
  name: z.string().min(1),
  nameFrom: z.enum(['variable', 'setting', 'url', 'qstash_region', 'assumed']),
  url: z.string().regex(/^https?:\/\/[^\s]+$/),
  token: z.string().min(1),
  currentSigningKey: z.string().min(1).nullable(),
  nextSigningKey: z.string().min(1).nullable(),
});

function leafPaths(object: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(object).flatMap(([name, value]) => {
    const path = `${prefix}${name}`;
    const nested = typeof value === 'object' && value !== null && !Array.isArray(value);
    return nested && !SETTINGS.some((row) => row.field === path)
      ? leafPaths(value as Record<string, unknown>, `${path}.`)
      : [path];
  });
}

function internalError(path: string, message: string): ConfigError {
  return new ConfigError(path, `internal configuration check failed at ${path}: ${message}; please report this`);
}

/**
 * The shape the rest of the exporter relies on, as each row's check states it. The readers give
 * the friendly messages; a failure here is a defect of the exporter. No field may be missing or
 * left over.
 */
export function validateConfig(candidate: Record<string, unknown>): ExporterConfig {
  const fields = SETTINGS.flatMap((row) => (row.field === undefined ? [] : [row.field]));
  for (const path of leafPaths(candidate)) {
    if (!fields.includes(path as ConfigPath) && !ASSEMBLED.some((top) => path === top || path.startsWith(`${top}.`)))
      throw internalError(path, 'no setting holds it');
  }
  for (const row of SETTINGS) {
    if (row.field === undefined) continue;
    const checked = row.kind.check.safeParse(valueAt(candidate, row.field));
    if (!checked.success) throw internalError(row.field, checked.error.issues[0]?.message ?? 'invalid');
  }
  const collectors = z
    .strictObject(Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, CollectorSchema])))
    .safeParse(candidate.collectors);
  if (!collectors.success) {
    const issue = collectors.error.issues[0];
    throw internalError(['collectors', ...(issue?.path ?? [])].join('.'), issue?.message ?? 'invalid');
  }
  const regions = z.array(RegionSchema).safeParse(valueAt(candidate, 'qstash.regions'));
  if (!regions.success) {
    const issue = regions.error.issues[0];
    throw internalError(['qstash', 'regions', ...(issue?.path ?? [])].join('.'), issue?.message ?? 'invalid');
  }
  return candidate as unknown as ExporterConfig;
}
