// Small HTTP helpers shared by the emulator's routes: body reading with the size limit, JSON
// bodies (optionally checked against a schema), the caller's address, and the JSON error answer
// `{"error": "..."}`.
import express, { type Request, type Response } from 'express';
import type { z } from 'zod';
import { EmulatorError, EmulatorInputError } from './errors.js';

const rawParsers = new Map<number, ReturnType<typeof express.raw>>();

/** The request body as bytes, any content type; rejects with a 413 error above `limit` bytes. */
export function readRawBody(req: Request, res: Response, limit: number): Promise<Buffer> {
  let parser = rawParsers.get(limit);
  if (!parser) {
    parser = express.raw({ type: () => true, limit, inflate: true });
    rawParsers.set(limit, parser);
  }
  const run = parser;
  return new Promise((resolve, reject) => {
    run(req, res, (error?: unknown) => {
      if (error) reject(error instanceof Error ? error : new Error('could not read the request body'));
      else resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    });
  });
}

/** The request body parsed as JSON; a 400 naming `body` when it is not JSON. */
export async function readJsonBody(req: Request, res: Response, limit: number): Promise<unknown> {
  const raw = await readRawBody(req, res, limit);
  if (raw.length === 0) throw new EmulatorInputError('body', 'a JSON body is required');
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new EmulatorInputError('body', 'not valid JSON');
  }
}

/** Where a schema issue points, as the client wrote it: `body`, `queueName`, `endpoints[0].url`. */
function issueField(issue: z.core.$ZodIssue | undefined): string {
  if (!issue || issue.path.length === 0) return 'body';
  return issue.path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index > 0 ? '.' : ''}${String(part)}`))
    .join('');
}

/** The JSON body checked against `schema`; a 400 naming the first offending field. */
export async function readJsonInput<T>(req: Request, res: Response, limit: number, schema: z.ZodType<T>): Promise<T> {
  const result = schema.safeParse(await readJsonBody(req, res, limit));
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new EmulatorInputError(issueField(issue), issue?.message ?? 'invalid');
}

/** The client's address without the IPv4-mapped prefix. */
export function callerIpOf(req: Request): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

export function sendError(res: Response, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(status).json({ error: message });
}

interface HttpishError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  message?: unknown;
  expose?: unknown;
}

/** Status and message for any error reaching the error handler; unknown errors are 500s without details. */
export function describeError(error: unknown): { status: number; message: string } {
  if (error instanceof EmulatorError) return { status: error.status, message: error.message };
  const candidate = (typeof error === 'object' && error !== null ? error : {}) as HttpishError;
  const status =
    typeof candidate.status === 'number'
      ? candidate.status
      : typeof candidate.statusCode === 'number'
        ? candidate.statusCode
        : 500;
  if (candidate.type === 'entity.too.large') return { status: 413, message: 'request body too large' };
  if (status >= 400 && status < 500) {
    const message =
      typeof candidate.message === 'string' && candidate.expose !== false ? candidate.message : 'bad request';
    return { status, message };
  }
  return { status: 500, message: 'internal emulator error' };
}
