// How to point a client at a running emulator: the lines the standalone `emulator` command and
// the demo print at start. The public development credentials are printed; credentials given by
// flags or environment never are (the paste line names their variables instead). The paste line
// starts with the command this program was started by (src/common/invocation.ts).
import { exporterCommand } from '../common/invocation.js';

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
