// The message and the code of anything thrown follow one rule, written once (src/common/errors.ts),
// and every log line names its error under one key, `err` (the key pino serialises as an error).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ApiAuthError } from '../../src/api/errors.js';
import { errorCode, errorMessage } from '../../src/common/errors.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The keys of the object literal each pino call (`.info({ ... }, msg)`) starts with, by `file:line`. */
function logCallKeys(): { where: string; keys: string[] }[] {
  const calls: { where: string; keys: string[] }[] = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/\.(?:trace|debug|info|warn|error|fatal)\(\s*\{/g)) {
      const open = match.index + match[0].length - 1;
      let depth = 0;
      let close = open;
      for (; close < text.length; close += 1) {
        if (text[close] === '{') depth += 1;
        else if (text[close] === '}' && --depth === 0) break;
      }
      const keys = [...text.slice(open, close + 1).matchAll(/[{,]\s*(\w+)\s*(?=[:,}])/g)].map((key) => key[1]!);
      calls.push({ where: `${relative(SRC, file)}:${text.slice(0, match.index).split('\n').length}`, keys });
    }
  }
  return calls;
}

describe('errorCode', () => {
  it("is the error's own code when it is shaped like one: the project's, undici's, the system's", () => {
    expect(errorCode(new ApiAuthError('no', { api: 'qstash', endpoint: '/v2/logs', method: 'GET', status: 401 }))).toBe(
      'ERR_API_AUTH',
    );
    expect(errorCode(Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' }))).toBe('UND_ERR_SOCKET');
    expect(errorCode(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(errorCode({ code: 'ERR_X' })).toBe('ERR_X');
  });

  it('is the class name of an error without a code, when the class says more than Error', () => {
    expect(errorCode(new TypeError('bad'))).toBe('TypeError');
    expect(errorCode(new DOMException('stop', 'AbortError'))).toBe('AbortError');
  });

  it('is ERR_UNKNOWN for anything else, never text from outside', () => {
    expect(errorCode(new Error('plain'))).toBe('ERR_UNKNOWN');
    expect(errorCode({ code: 'Bearer abc.def leaked' })).toBe('ERR_UNKNOWN');
    expect(errorCode({ code: 42 })).toBe('ERR_UNKNOWN');
    expect(errorCode('ERR_STRING')).toBe('ERR_UNKNOWN');
    expect(errorCode(null)).toBe('ERR_UNKNOWN');
    expect(errorCode(undefined)).toBe('ERR_UNKNOWN');
  });
});

describe('errorMessage', () => {
  it("is an error's message, else the thrown value as text", () => {
    expect(errorMessage(new RangeError('out of range'))).toBe('out of range');
    expect(errorMessage('a string')).toBe('a string');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});

describe('one rule, one place', () => {
  it('no module but src/common/errors.ts writes its own code rule or message idiom', () => {
    const elsewhere = sources(SRC)
      .filter((file) => relative(SRC, file) !== join('common', 'errors.ts'))
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        const found: string[] = [];
        if (/function errorCode\b/.test(text)) found.push(`${relative(SRC, file)}: function errorCode`);
        if (/(\w+) instanceof Error \? \1\.message : String\(\1\)/.test(text))
          found.push(`${relative(SRC, file)}: inline error message`);
        return found;
      });
    expect(elsewhere).toEqual([]);
  });

  it('every log line names its error under `err`, never `error`', () => {
    const calls = logCallKeys();
    // The scan must see the log calls, or it would pass on nothing.
    expect(calls.filter((call) => call.keys.includes('err')).length).toBeGreaterThan(10);
    expect(calls.filter((call) => call.keys.includes('error')).map((call) => call.where)).toEqual([]);
  });
});
