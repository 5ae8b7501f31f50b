// Secrets: given directly or as a `_file`, never both, never empty, never shown.
import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';
import { resolvePath, type RawValue, type Sources } from './precedence.js';
import { asText } from './values.js';

/** The secret `key` (or its `_file` variant); `what` names it in messages (`QStash token`). */
export function readSecret(sources: Sources, key: string, what: string): string | null {
  const fileKey = `${key}_file`;
  const layer = sources.firstLayerWith([key, fileKey]);
  if (layer === undefined) return null;
  const direct = layer.get(key);
  const file = layer.get(fileKey);
  if (direct !== undefined && file !== undefined) {
    throw new ConfigError(key, `${direct.origin} and ${file.origin} are both set; keep only one of them`);
  }

  let secret: string;
  let origin: string;
  if (file !== undefined) {
    ({ secret, origin } = readSecretFile(fileKey, file, asText(fileKey, file, 'a file path'), what));
  } else if (direct !== undefined) {
    if (direct.value === null || typeof direct.value !== 'string') {
      throw new ConfigError(key, `${direct.origin} must be a text value (quote it in YAML); the value is not shown`);
    }
    secret = direct.value;
    origin = direct.origin;
  } else {
    return null;
  }
  return checkedSecret(key, secret, origin, what);
}

/** The secret held in the file `pathText` names (given by `file`), without its trailing newline. */
export function readSecretFile(
  fileKey: string,
  file: RawValue,
  pathText: string,
  what: string,
): { secret: string; origin: string } {
  const path = resolvePath(file, pathText.trim());
  if (pathText.trim() === '')
    throw new ConfigError(fileKey, `${file.origin} is empty; give the path of the file holding the ${what}`);
  try {
    // Docker and Kubernetes secrets usually end with a newline: it is not part of the secret.
    return { secret: readFileSync(path, 'utf8').replace(/[\r\n]+$/, ''), origin: `${file.origin} (${path})` };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(
      fileKey,
      `${file.origin}: cannot read ${path} (${reason}); check the path and that the exporter may read it`,
    );
  }
}

/** A secret as given, refused when empty or holding whitespace (never shown). */
export function checkedSecret(key: string, secret: string, origin: string, what: string): string {
  if (secret.trim() === '') {
    throw new ConfigError(key, `${origin} is empty; set it to your ${what} or unset it`);
  }
  // Stray whitespace or control characters break the Authorization header in confusing ways.
  if (/[\s\p{Cc}]/u.test(secret)) {
    throw new ConfigError(
      key,
      `${origin} contains whitespace or control characters (value not shown); check that the ${what} was copied whole`,
    );
  }
  return secret;
}
