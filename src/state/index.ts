export {
  CheckpointFile,
  StateFileError,
  STATE_FORMAT,
  STATE_VERSION,
  upstreamIdentity,
  type CheckpointFileOptions,
  type LoadResult,
  type SetAsideReason,
} from './checkpoint-file.js';
export {
  logsStateSchema,
  migrateLogsState,
  type CounterFamilyState,
  type HistogramFamilyState,
  type LogsState,
  type SliceState,
  type TrackedState,
  type WalkState,
} from './logs-state.js';
export { CheckpointSection, type CheckpointSectionOptions, type SectionLoad } from './checkpoint-section.js';
export { workflowsStateSchema, type WorkflowsState } from './workflows-state.js';
export { waitingStateSchema, type WaitingState } from './waiting-state.js';
