// Writes a JSON document `prefix item,item,... suffix` one item at a time, waiting for the
// socket to drain, so a log page of large bodies never has to exist as one string.
import { once } from 'node:events';
import type { Response } from 'express';

export async function writeJsonStreamed(res: Response, prefix: string, items: readonly unknown[], suffix: string): Promise<void> {
  res.status(200).setHeader('Content-Type', 'application/json; charset=utf-8');
  const write = async (text: string): Promise<boolean> => {
    if (res.destroyed) return false;
    if (!res.write(text)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
    return !res.destroyed;
  };
  if (!(await write(prefix))) return;
  for (let i = 0; i < items.length; i++) {
    if (!(await write((i === 0 ? '' : ',') + JSON.stringify(items[i])))) return;
  }
  res.end(suffix);
}
