// Writes a JSON document `prefix item,item,... suffix` one item at a time, waiting for the
// socket to drain, so a log page of large bodies never has to exist as one string.
import type { Response } from 'express';

/** Resolves on the first of drain and close, leaving no listener behind (pages may have thousands of items). */
function drainedOrClosed(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export async function writeJsonStreamed(
  res: Response,
  prefix: string,
  items: readonly unknown[],
  suffix: string,
): Promise<void> {
  res.status(200).setHeader('Content-Type', 'application/json; charset=utf-8');
  const write = async (text: string): Promise<boolean> => {
    if (res.destroyed) return false;
    if (!res.write(text)) await drainedOrClosed(res);
    return !res.destroyed;
  };
  if (!(await write(prefix))) return;
  for (let i = 0; i < items.length; i++) {
    if (!(await write((i === 0 ? '' : ',') + JSON.stringify(items[i])))) return;
  }
  res.end(suffix);
}
