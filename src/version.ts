// The package version, read once from package.json (one directory above both src/ and dist/).
import { readFileSync } from 'node:fs';

function readVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  if (typeof manifest.version !== 'string') throw new Error('package.json has no version');
  return manifest.version;
}

export const VERSION: string = readVersion();
