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
export { CheckpointSection, type CheckpointSectionOptions, type SectionLoad } from './checkpoint-section.js';
