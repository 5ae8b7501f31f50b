// Shared pieces of the upstream schemas: the null-tolerant optional wrapper, the time-series
// point, and the translation of a zod failure into ApiSchemaDriftError.
import { z } from 'zod';
import { ApiSchemaDriftError, formatPath, jsonTypeOf } from '../errors.js';
import type { ApiName } from '../errors.js';

/** Who asked, for the drift error. */
export interface SchemaContext {
  api: ApiName;
  endpoint: string;
  method: string;
}

/**
 * An optional field that may also be `null`: the service is written in Go, where a nil slice
 * or map serializes as `null`. Null reads as absent, so consumers only deal with undefined.
 */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/** A JSON object whose inner shape is not promised (header maps): checked, not copied. */
export const jsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  { message: 'object' },
);

/** One point of a management time series: `x` is a timestamp text, `y` the value. */
export const seriesPointSchema = z.looseObject({ x: z.string(), y: z.number() });
export type SeriesPoint = z.infer<typeof seriesPointSchema>;

/** Parse `data` with `schema`; a failure becomes ApiSchemaDriftError naming the first bad field. */
export function parseWith<T extends z.ZodType>(schema: T, data: unknown, context: SchemaContext): z.output<T> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  throw driftFromZod(result.error, data, context);
}

export function driftFromZod(error: z.ZodError, data: unknown, context: SchemaContext): ApiSchemaDriftError {
  const issue = deepestIssue(error.issues);
  const path = issue?.path ?? [];
  return new ApiSchemaDriftError(
    {
      path: formatPath(path),
      expected: describeExpected(issue),
      received: jsonTypeOf(valueAt(data, path)),
    },
    context,
  );
}

/**
 * A union failure nests its branches' issues; the most specific one explains the drift best:
 * the deepest path, and at equal depth a custom check over a bare type mismatch.
 */
function deepestIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue | undefined {
  const first = issues[0];
  if (first?.code === 'invalid_union' && first.errors.length > 0) {
    let best: z.core.$ZodIssue | undefined;
    for (const branch of first.errors) {
      const candidate = deepestIssue(branch);
      if (!candidate) continue;
      const deeper = !best || candidate.path.length > best.path.length;
      const sharper =
        best !== undefined &&
        candidate.path.length === best.path.length &&
        best.code === 'invalid_type' &&
        candidate.code !== 'invalid_type';
      if (deeper || sharper) best = candidate;
    }
    if (best && (best.path.length > 0 || best.code !== 'invalid_type')) {
      return { ...best, path: [...first.path, ...best.path] };
    }
  }
  return first;
}

function describeExpected(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return 'a valid value';
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'int' ? 'integer' : issue.expected;
    case 'invalid_union':
      return 'one of the accepted shapes';
    case 'invalid_value':
      return `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      // Zod's own messages for the remaining codes describe the schema, never the input.
      return issue.message;
  }
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = data;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
