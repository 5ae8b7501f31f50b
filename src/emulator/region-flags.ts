// `--regions` of `upstash-exporter emulator`: the QStash regions served, each at its own address,
// with its credentials from the official SDKs' environment (`<REGION>_QSTASH_TOKEN`,
// `<REGION>_QSTASH_CURRENT_SIGNING_KEY`, `<REGION>_QSTASH_NEXT_SIGNING_KEY`), so an app's
// migration-mode `.env` starts an emulator its clients can use as they are.
import { EmulatorUsageError } from './errors.js';
import { parseListenAddress } from './listen-address.js';
import type { RegionOptions } from './options.js';
import { isRegionName, regionEnvPrefix } from './regions.js';

/** Which of a region's credentials are public development values (printable at start). */
export interface RegionPublicity {
  name: string;
  token: boolean;
  signingKeys: boolean;
}

export interface ParsedRegions {
  regions: RegionOptions[];
  publicity: RegionPublicity[];
}

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new EmulatorUsageError(flag, 'is empty');
  return value.trim();
}

/**
 * `eu-central-1,us-east-1` (the first on --listen-address, the others on the next ports, or free
 * ports when that one is 0) or `eu-central-1=127.0.0.1:8787,us-east-1=127.0.0.1:8788`. The first
 * region's token and keys come from the single-region flags when given (`first`); every region's
 * from its `<REGION>_QSTASH_*` variables otherwise; unset, the public development values.
 */
export function parseRegionsFlag(
  text: string,
  listen: { host: string; port: number },
  env: NodeJS.ProcessEnv,
  first: { token?: string; currentSigningKey?: string; nextSigningKey?: string },
): ParsedRegions {
  const items = text.split(',').map((item) => item.trim());
  if (items.some((item) => item === ''))
    throw new EmulatorUsageError(
      '--regions',
      `expected a comma list such as eu-central-1,us-east-1, got ${JSON.stringify(text)}`,
    );
  const regions: RegionOptions[] = [];
  const publicity: RegionPublicity[] = [];
  for (const [index, item] of items.entries()) {
    const [name = '', address] = item.split(/=(.*)/s);
    if (!isRegionName(name))
      throw new EmulatorUsageError(
        '--regions',
        `expected region names such as eu-central-1 or us-east-1, got ${JSON.stringify(name)}`,
      );
    if (regions.some((region) => region.name === name))
      throw new EmulatorUsageError('--regions', `region ${name} is given twice`);
    let where: { host: string; port: number };
    if (address !== undefined) {
      try {
        where = parseListenAddress(address);
      } catch {
        throw new EmulatorUsageError('--regions', `${name}: expected host:port, got ${JSON.stringify(address)}`);
      }
    } else {
      where = { host: listen.host, port: listen.port === 0 ? 0 : listen.port + index };
      if (where.port > 65_535) throw new EmulatorUsageError('--regions', `${name}: port ${where.port} is above 65535`);
    }
    const prefix = regionEnvPrefix(name);
    const own = index === 0 ? first : {};
    const token = own.token ?? nonEmpty(`${prefix}_QSTASH_TOKEN`, env[`${prefix}_QSTASH_TOKEN`]);
    const current =
      own.currentSigningKey ??
      nonEmpty(`${prefix}_QSTASH_CURRENT_SIGNING_KEY`, env[`${prefix}_QSTASH_CURRENT_SIGNING_KEY`]);
    const next =
      own.nextSigningKey ?? nonEmpty(`${prefix}_QSTASH_NEXT_SIGNING_KEY`, env[`${prefix}_QSTASH_NEXT_SIGNING_KEY`]);
    // Both or neither, as for the single-region flags: a receiver verifies with the pair.
    if ((current === undefined) !== (next === undefined))
      throw new EmulatorUsageError(
        current === undefined ? `${prefix}_QSTASH_CURRENT_SIGNING_KEY` : `${prefix}_QSTASH_NEXT_SIGNING_KEY`,
        `give both signing keys of ${name} or neither`,
      );
    regions.push({
      name,
      host: where.host,
      port: where.port,
      ...(token !== undefined ? { token } : {}),
      ...(current !== undefined && next !== undefined ? { currentSigningKey: current, nextSigningKey: next } : {}),
    });
    publicity.push({ name, token: token === undefined, signingKeys: current === undefined });
  }
  return { regions, publicity };
}
