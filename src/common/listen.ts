// A failed listen() of the exporter, the emulator or the demo: recognised the same way and
// reported as the same one line (the flag, the address, the errno code), exit status 2.

/** True for the errors `listen()` fails with when the address cannot be used (taken, not ours, unknown). */
export function isListenError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND';
}

/** The line for an address that cannot be listened on: `--flag: cannot listen on host:port (CODE); choose another with --flag`. */
export function cannotListenText(flag: string, address: string, error: unknown): string {
  return `${flag}: cannot listen on ${address} (${String((error as { code?: unknown } | null)?.code)}); choose another with ${flag}`;
}
