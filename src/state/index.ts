export { CheckpointFile, type CheckpointFileOptions } from './checkpoint-file.js';
export {
  StateFileError,
  STATE_FORMAT,
  STATE_VERSION,
  upstreamIdentity,
  type LoadResult,
  type SetAsideReason,
} from './envelope.js';
export { CheckpointSection, type CheckpointSectionOptions, type SectionLoad } from './checkpoint-section.js';
export { claimStateFile, legacyRegionFile, type StateRegion } from './state-regions.js';
