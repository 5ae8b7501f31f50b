export { createLogger, type Logger, type LoggerOptions, type LogLevelName, type LogFormatName } from './logger.js';
export { createScrubber, REDACTED } from './scrub.js';
