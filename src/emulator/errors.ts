// Error classes of the emulator. Every error answered over HTTP carries a status and a string
// code; the message is what the client sees in `{"error": message}`, so it never holds secrets.

export type EmulatorErrorCode =
  | 'ERR_EMULATOR_INPUT'
  | 'ERR_EMULATOR_AUTH'
  | 'ERR_EMULATOR_NOT_FOUND'
  | 'ERR_EMULATOR_TOO_LARGE'
  | 'ERR_EMULATOR_KNOB'
  | 'ERR_EMULATOR_CLI';

export class EmulatorError extends Error {
  readonly code: EmulatorErrorCode;
  readonly status: number;

  constructor(code: EmulatorErrorCode, status: number, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
  }
}

/** A malformed request; the message names the offending field (header, query key, body key). */
export class EmulatorInputError extends EmulatorError {
  readonly field: string;

  constructor(field: string, problem: string) {
    super('ERR_EMULATOR_INPUT', 400, `invalid ${field}: ${problem}`);
    this.field = field;
  }
}

export class EmulatorAuthError extends EmulatorError {
  constructor(message: string) {
    super('ERR_EMULATOR_AUTH', 401, message);
  }
}

export class EmulatorNotFoundError extends EmulatorError {
  constructor(message: string) {
    super('ERR_EMULATOR_NOT_FOUND', 404, message);
  }
}

/** An invalid knob value, from a flag, PATCH /__emulator/knobs or setKnobs(). */
export class EmulatorKnobError extends EmulatorError {
  readonly knob: string;

  constructor(knob: string, problem: string) {
    super('ERR_EMULATOR_KNOB', 400, `invalid knob ${knob}: ${problem}`);
    this.knob = knob;
  }
}

/**
 * Invalid command-line usage of `upstash-exporter emulator`. Shares the code of the exporter's
 * ConfigError, so the CLI prints the one-line message and exits with status 2.
 */
export class EmulatorUsageError extends Error {
  readonly code = 'ERR_CONFIG';
  readonly flag: string;

  constructor(flag: string, problem: string) {
    super(`${flag}: ${problem}`);
    this.name = 'EmulatorUsageError';
    this.flag = flag;
  }
}
