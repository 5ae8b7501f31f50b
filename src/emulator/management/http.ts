// Response helpers shared by the management and admin routes: every error is JSON
// `{"error": "..."}` with the status of its ManagementError (500 for anything unexpected).
import type { ErrorRequestHandler, Request, Response } from 'express';
import { ManagementError } from './errors.js';

export function sendError(res: Response, error: unknown): void {
  if (error instanceof ManagementError) {
    res.status(error.status).json({ error: error.message });
    return;
  }
  res.status(500).json({ error: 'internal emulator error' });
}

/** Wraps a synchronous handler so a thrown ManagementError becomes its JSON answer. */
export function handle(handler: (req: Request, res: Response) => void): (req: Request, res: Response) => void {
  return (req, res) => {
    try {
      handler(req, res);
    } catch (error) {
      sendError(res, error);
    }
  };
}

/** Body-parser failures (bad JSON, too large) answered as JSON like every other error. */
export const jsonErrorHandler: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
  const status =
    typeof error === 'object' && error !== null && 'status' in error && typeof error.status === 'number'
      ? error.status
      : 500;
  if (status >= 400 && status < 500) {
    res.status(status).json({ error: 'invalid request body' });
    return;
  }
  sendError(res, error);
};
