export {
  CheckpointFile,
  StateFileError,
  STATE_FORMAT,
  STATE_VERSION,
  upstreamIdentity,
  writtenFor,
  type CheckpointFileOptions,
  type LoadResult,
  type SetAsideReason,
} from './checkpoint-file.js';
export { CheckpointSection, type CheckpointSectionOptions, type SectionLoad } from './checkpoint-section.js';
