// Listen addresses of the emulator's command line (and of the demo, which starts the emulator):
// parsing `host:port`, writing a host into a URL, and recognising a failed listen.
import { EmulatorUsageError } from './errors.js';

export { isListenError } from '../common/listen.js';

export const DEFAULT_LISTEN_ADDRESS = '127.0.0.1:8787';

/** Parses `host:port`, `[v6]:port` or `:port` (all interfaces). */
export function parseListenAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || port > 65_535)
    throw new EmulatorUsageError('--listen-address', `expected host:port, got ${JSON.stringify(text)}`);
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}
