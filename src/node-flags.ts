// The V8 flags the exporter runs with: the shebang of src/cli.ts, the Dockerfile's CMD and
// `npm start` pass them (a test keeps the three equal to this list), and the bench runs its
// memory children and exporter children with them, so the figures are those of what ships.
//
// --max-semi-space-size=2 (MiB): V8 grows the young generation up to 16 MiB per semi-space (32 MiB
// committed) under the allocation rate of a long walk (a page of 100 entries parsed every few
// milliseconds) and keeps it; those pages are garbage within a page, so 2 MiB semi-spaces hold
// them as well. It took the bench's RSS after one million events from 125-137 MiB to about 100
// MiB (docs/performance.md). V8 reads it when the heap is created: v8.setFlagsFromString at
// run time has no effect on it, which is why it is on the command line.
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
