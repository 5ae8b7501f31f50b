// The state file of several QStash regions: one file, one part per region (checkpoint-file.ts
// writes them together). At start, before any collector reads its part, claimStateFile tells
// which part is whose: the top level of a file written by a build without regions belongs to the
// region it was written for; a region no longer configured keeps its part, written back as it is;
// a region the file has no part of reads the file the previous build wrote for it beside the
// state file (`<name>.<region>.json`), once: the next write carries it and removes that file.
import { lstatSync } from 'node:fs';
import { isErrno } from '../config/state-file-access.js';
import { parseEnvelope, partsIn, STATE_VERSION, TOP_PART } from './envelope.js';
import { forgetSharedFile, partOf, recordOnDisk, sharedFileOf } from './shared-file.js';
import { readTextSync } from './file-io.js';

/** A watched region as the state file knows it: its name and upstreamIdentity(). */
export interface StateRegion {
  name: string;
  upstream: string;
}

/**
 * The file the previous build kept a region's checkpoint in when that region was not the state
 * file's: `<name>.<region>.json` beside `state.json` (`<path>.<region>` for a name without a dot).
 */
export function legacyRegionFile(stateFile: string, region: string): string {
  const dot = stateFile.lastIndexOf('.');
  const slash = stateFile.lastIndexOf('/');
  return dot > slash + 1 ? `${stateFile.slice(0, dot)}.${region}${stateFile.slice(dot)}` : `${stateFile}.${region}`;
}

/**
 * Reads the state file once to tell each watched region where its part is, before the regions'
 * collectors read it. Returns the regions whose parts the file keeps while they are not
 * configured (said once in the log by the caller). A file that cannot be read or used is left to
 * the collectors' reads, which report it.
 */
export function claimStateFile(path: string, regions: readonly StateRegion[]): { kept: string[] } {
  forgetSharedFile(path);
  const shared = sharedFileOf(path);
  const present = new Set<string>();
  const kept: string[] = [];
  let text: string | undefined;
  try {
    text = readTextSync(path);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) shared.onDisk = 'absent';
  }
  const parsed = text === undefined ? undefined : parseEnvelope(text);
  if (parsed?.ok === true && parsed.envelope.version <= STATE_VERSION) {
    const envelope = parsed.envelope;
    // Every part of it is carried by this process's writes from now on: it may replace it.
    recordOnDisk(path);
    if (envelope.region === undefined) {
      // A single-region build's file: its region's, whichever was first configured otherwise
      // (that region's read then finds it foreign and sets it aside, as before regions).
      shared.unnamedTopOwner = (regions.find((region) => region.upstream === envelope.upstream) ?? regions[0])?.name;
    }
    shared.home ??= envelope.region ?? shared.unnamedTopOwner;
    for (const [name, raw] of partsIn(envelope)) {
      const region = name === TOP_PART ? shared.unnamedTopOwner : name;
      if (region === undefined) continue;
      present.add(region);
      if (regions.some((watched) => watched.name === region)) continue;
      partOf(path, region).kept = {
        version: raw.version,
        upstream: raw.upstream,
        savedAt: raw.savedAt,
        payload: JSON.stringify(raw.payload),
      };
      kept.push(region);
    }
  }
  for (const region of regions) {
    if (present.has(region.name)) continue;
    const side = legacyRegionFile(path, region.name);
    try {
      if (lstatSync(side).isFile()) shared.sideFiles.set(region.name, side);
    } catch {
      // None: the region starts fresh (or from its part, once written).
    }
  }
  return { kept };
}
