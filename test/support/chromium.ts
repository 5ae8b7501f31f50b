// Debian's headless Chromium for the tests that look at a page as a browser renders it: the
// DOM after parsing (--dump-dom) and screenshots. Each run gets a fresh profile and no network
// beyond the page it is given; its stderr carries the console, CSP violations included.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ChromiumRun {
  stdout: string;
  stderr: string;
}

/** Runs `chromium --headless` with the flags of a throwaway, offline profile, then `args`. */
export async function runChromium(binary: string, args: readonly string[], timeoutMs = 60_000): Promise<ChromiumRun> {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  try {
    return await new Promise<ChromiumRun>((resolve, reject) => {
      execFile(
        binary,
        [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--hide-scrollbars',
          '--enable-logging=stderr',
          '--v=0',
          `--user-data-dir=${profile}`,
          ...args,
        ],
        { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) =>
          error ? reject(new Error(`chromium failed: ${error.message}\n${stderr}`)) : resolve({ stdout, stderr }),
      );
    });
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Console lines of a run that report a Content-Security-Policy violation. */
export function cspViolations(stderr: string): string[] {
  return stderr.split('\n').filter((line) => /CONSOLE/.test(line) && /Content Security Policy/i.test(line));
}
