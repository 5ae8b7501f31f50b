// One error class for the management side of the emulator: the HTTP routes turn it into a
// status and a JSON `{"error": ...}` body, in-process callers catch it by `code`.

export type ManagementErrorCode = 'ERR_EMULATOR_AUTH' | 'ERR_EMULATOR_NOT_FOUND' | 'ERR_EMULATOR_INPUT';

const STATUS_BY_CODE: Record<ManagementErrorCode, number> = {
  ERR_EMULATOR_AUTH: 401,
  ERR_EMULATOR_NOT_FOUND: 404,
  ERR_EMULATOR_INPUT: 400,
};

export class ManagementError extends Error {
  readonly code: ManagementErrorCode;
  /** HTTP status the routes answer with. */
  readonly status: number;

  constructor(code: ManagementErrorCode, message: string) {
    super(message);
    this.name = 'ManagementError';
    this.code = code;
    this.status = STATUS_BY_CODE[code];
  }
}
