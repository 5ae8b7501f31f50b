// `npm run soak -- --help` printed "--help needs a positive number" (every flag was read as a
// number): the soak's command line, read by parseSoakArgs (bench/soak.ts).
import { describe, expect, it } from 'vitest';
import { parseSoakArgs } from '../../bench/soak.js';

describe('npm run soak arguments', () => {
  it('--help (and -h) asks for the usage, whatever follows', () => {
    expect(parseSoakArgs(['--help'])).toBeNull();
    expect(parseSoakArgs(['-h'])).toBeNull();
    expect(parseSoakArgs(['--minutes', '3', '--help'])).toBeNull();
  });

  it('reads the minutes, seed, rate and output file, as separate or inline values', () => {
    expect(parseSoakArgs(['--minutes', '15', '--seed=2', '--rate', '20', '--output', '/tmp/soak.log'])).toEqual({
      minutes: 15,
      seed: 2,
      messagesPerSecond: 20,
      outputFile: '/tmp/soak.log',
    });
    expect(parseSoakArgs([])).toEqual({});
  });

  it('refuses an unknown flag by name before reading its value, and a value that is not a positive number', () => {
    expect(() => parseSoakArgs(['--minute', '3'])).toThrow(/^unknown flag --minute; flags: --minutes <n>/);
    expect(() => parseSoakArgs(['--seed', 'x'])).toThrow('--seed needs a positive number, got "x"');
    expect(() => parseSoakArgs(['--minutes'])).toThrow('--minutes needs a value');
    expect(() => parseSoakArgs(['--output'])).toThrow('--output needs a value');
  });
});
