// The exporter started ten minutes ahead of the upstream (test/clock-jumps.test.ts), in a
// process of its own: vitest runs each test file in its own process.
process.env.CLOCK_JUMPS_ONLY = 'start-ahead';
await import('./clock-jumps.test.js');
