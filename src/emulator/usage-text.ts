// How to point a client at a running emulator: the lines the standalone `emulator` command and
// the demo print at start. The public development credentials are printed; credentials given by
// flags or environment never are (the paste line names their variables instead). The paste line
// starts with the command this program was started by (src/common/invocation.ts).
import { exporterCommand } from '../common/invocation.js';
import { regionEnvPrefix } from './regions.js';

export interface EmulatorAccess {
  url: string;
  credentials: { token: string; email: string; apiKey: string };
  /** Which credentials are the public development defaults (printable). */
  public: { token: boolean; email: boolean; apiKey: boolean };
}

/** Lines (indented by two spaces) with the URL, the public credentials and a ready-to-paste exporter command. */
export function emulatorAccessLines(
  access: EmulatorAccess,
  exporterListenAddress: string,
  command: string = exporterCommand(),
): string[] {
  const { url, credentials } = access;
  const shown = access.public;
  const lines = [`  point the exporter at it: --qstash-url ${url} --management-url ${url}`];
  if (shown.token || shown.email || shown.apiKey) {
    lines.push(
      '  public development credentials (set --qstash-token/QSTASH_TOKEN, --upstash-email/UPSTASH_EMAIL, --upstash-api-key/UPSTASH_API_KEY to change):',
    );
    lines.push(`    URL=${url}`);
    if (shown.token) lines.push(`    QSTASH_TOKEN=${credentials.token}`);
    if (shown.email) lines.push(`    UPSTASH_EMAIL=${credentials.email}`);
    if (shown.apiKey) lines.push(`    UPSTASH_API_KEY=${credentials.apiKey}`);
  }
  const token = shown.token ? credentials.token : '"$QSTASH_TOKEN"';
  const email = shown.email ? credentials.email : '"$UPSTASH_EMAIL"';
  const apiKey = shown.apiKey ? credentials.apiKey : '"$UPSTASH_API_KEY"';
  lines.push(
    command.startsWith('node ')
      ? '  an exporter reading it (paste from the repository, after npm run build):'
      : '  an exporter reading it (paste):',
    `    ${command} run --qstash-url ${url} --qstash-token ${token} --management-url ${url} --upstash-email ${email} --upstash-api-key ${apiKey} --listen-address ${exporterListenAddress} --state-file none`,
  );
  return lines;
}

/** One region as the migration-mode lines show it; `public` says which secrets may be printed. */
export interface RegionAccess {
  name: string;
  url: string;
  token: string;
  signingKeys: { current: string; next: string };
  public: { token: boolean; signingKeys: boolean };
}

/**
 * Lines (indented by two spaces) listing every region's address, then the official SDKs'
 * migration-mode environment to paste into an app's `.env` (qstash-js multi-region/utils.ts):
 * `QSTASH_REGION` naming the first region, `<REGION>_QSTASH_URL`, `_TOKEN`, `_CURRENT_SIGNING_KEY`,
 * `_NEXT_SIGNING_KEY` of each, and the account's management credentials. Secrets that are not
 * public development values are not printed: their line names where they came from.
 */
export function regionEnvironmentLines(
  regions: readonly RegionAccess[],
  account: { email: string; apiKey: string; public: { email: boolean; apiKey: boolean } },
): string[] {
  const width = Math.max(...regions.map((region) => region.name.length));
  const lines = [
    '  regions (each its own delivery API: messages, logs, queues, schedules, DLQ, token, signing keys; the management API on every address):',
    ...regions.map((region) => `    ${region.name.padEnd(width)}  ${region.url}`),
    "  the official SDKs' migration-mode environment (paste into the app's .env; QSTASH_REGION names the region new messages go to):",
  ];
  const first = regions[0];
  if (first) lines.push(`    QSTASH_REGION=${regionEnvPrefix(first.name)}`);
  for (const region of regions) {
    const prefix = regionEnvPrefix(region.name);
    lines.push(`    ${prefix}_QSTASH_URL=${region.url}`);
    lines.push(
      region.public.token
        ? `    ${prefix}_QSTASH_TOKEN=${region.token}`
        : `    # ${prefix}_QSTASH_TOKEN: given by flag or environment, not printed`,
    );
    if (region.public.signingKeys) {
      lines.push(`    ${prefix}_QSTASH_CURRENT_SIGNING_KEY=${region.signingKeys.current}`);
      lines.push(`    ${prefix}_QSTASH_NEXT_SIGNING_KEY=${region.signingKeys.next}`);
    } else {
      lines.push(`    # ${prefix}_QSTASH_CURRENT_SIGNING_KEY, ${prefix}_QSTASH_NEXT_SIGNING_KEY: given, not printed`);
    }
  }
  lines.push(
    account.public.email ? `    UPSTASH_EMAIL=${account.email}` : '    # UPSTASH_EMAIL: given, not printed',
    account.public.apiKey ? `    UPSTASH_API_KEY=${account.apiKey}` : '    # UPSTASH_API_KEY: given, not printed',
  );
  return lines;
}
