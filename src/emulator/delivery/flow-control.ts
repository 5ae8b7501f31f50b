// Flow-control keys: messages published with `Upstash-Flow-Control-Key` share a parallelism (at
// most that many attempts in flight) and a rate (at most `rate` attempts started per `period`
// seconds); messages over either limit wait in the key's wait list. A key can be paused (new and
// waiting messages stay), and its parallelism or rate pinned (later messages cannot change it).
// The record follows the SDK's FlowControlInfo. 0 in parallelismMax or rateMax means no limit.
import type { ScaledClock } from '../clock.js';
import { EmulatorNotFoundError } from '../errors.js';
import type { FlowControlSpec } from './message-options.js';

/** Period of a rate given without one (the SDK's default: a second). */
export const DEFAULT_RATE_PERIOD_S = 1;

export interface FlowControlState {
  key: string;
  parallelismMax: number;
  /** Attempts of the key's messages in flight now. */
  parallelismCount: number;
  rateMax: number;
  /** Attempts started in the current period. */
  rateCount: number;
  ratePeriodS: number;
  /** Virtual time the current period began. */
  periodStartVirtual: number;
  paused: boolean;
  pinnedParallelism: boolean;
  pinnedRate: boolean;
  /** Messages held back by this key (filled by the dispatcher). */
  waitListSize: number;
  /** Whether a timer is set to release the wait list when the rate period ends. */
  releaseArmed: boolean;
}

export interface FlowControlJson {
  flowControlKey: string;
  waitListSize: number;
  parallelismMax: number;
  parallelismCount: number;
  rateMax: number;
  rateCount: number;
  ratePeriod: number;
  ratePeriodStart: number;
  isPaused: boolean;
  isPinnedParallelism: boolean;
  isPinnedRate: boolean;
}

export class FlowControlStore {
  private readonly keys = new Map<string, FlowControlState>();

  constructor(private readonly clock: ScaledClock) {}

  get(key: string): FlowControlState | undefined {
    return this.keys.get(key);
  }

  require(key: string): FlowControlState {
    const state = this.keys.get(key);
    if (!state) throw new EmulatorNotFoundError(`flow control key ${key} not found`);
    return state;
  }

  list(): FlowControlState[] {
    return [...this.keys.values()];
  }

  clear(): void {
    this.keys.clear();
  }

  /** A message arrives with this flow control: the key is created, and unpinned settings follow it. */
  apply(spec: FlowControlSpec): FlowControlState {
    const state = this.ensure(spec.key);
    if (!state.pinnedParallelism && spec.parallelism !== undefined) state.parallelismMax = spec.parallelism;
    if (!state.pinnedRate) {
      if (spec.rate !== undefined) state.rateMax = spec.rate;
      if (spec.period !== undefined) state.ratePeriodS = Math.max(1, spec.period);
    }
    return state;
  }

  /**
   * How many more attempts of the key may start now (Infinity: no limit), after rolling the rate
   * period forward. 0 while paused.
   */
  room(state: FlowControlState): number {
    if (state.paused) return 0;
    this.rollPeriod(state);
    const byParallelism =
      state.parallelismMax > 0 ? state.parallelismMax - state.parallelismCount : Number.POSITIVE_INFINITY;
    const byRate = state.rateMax > 0 ? state.rateMax - state.rateCount : Number.POSITIVE_INFINITY;
    return Math.max(0, Math.min(byParallelism, byRate));
  }

  /** Virtual time the current rate period ends, when the rate is what holds messages back. */
  rateResumesAt(state: FlowControlState): number | undefined {
    if (state.paused || state.rateMax <= 0 || state.rateCount < state.rateMax) return undefined;
    return state.periodStartVirtual + state.ratePeriodS * 1000;
  }

  started(state: FlowControlState): void {
    state.parallelismCount++;
    state.rateCount++;
  }

  finished(key: string): void {
    const state = this.keys.get(key);
    if (state) state.parallelismCount = Math.max(0, state.parallelismCount - 1);
  }

  pin(key: string, settings: { parallelism?: number; rate?: number; period?: number }): void {
    const state = this.require(key);
    if (settings.parallelism !== undefined) {
      state.parallelismMax = settings.parallelism;
      state.pinnedParallelism = true;
    }
    if (settings.rate !== undefined) {
      state.rateMax = settings.rate;
      state.pinnedRate = true;
    }
    if (settings.period !== undefined) state.ratePeriodS = Math.max(1, settings.period);
  }

  unpin(key: string, which: { parallelism: boolean; rate: boolean }): void {
    const state = this.require(key);
    if (which.parallelism) state.pinnedParallelism = false;
    if (which.rate) state.pinnedRate = false;
  }

  resetRate(key: string): void {
    const state = this.require(key);
    state.rateCount = 0;
    state.periodStartVirtual = this.clock.virtualNow();
  }

  json(state: FlowControlState): FlowControlJson {
    this.rollPeriod(state);
    return {
      flowControlKey: state.key,
      waitListSize: state.waitListSize,
      parallelismMax: state.parallelismMax,
      parallelismCount: state.parallelismCount,
      rateMax: state.rateMax,
      rateCount: state.rateCount,
      ratePeriod: state.ratePeriodS,
      // Unix seconds, like the period itself.
      ratePeriodStart: Math.floor(this.clock.realAt(state.periodStartVirtual) / 1000),
      isPaused: state.paused,
      isPinnedParallelism: state.pinnedParallelism,
      isPinnedRate: state.pinnedRate,
    };
  }

  private ensure(key: string): FlowControlState {
    let state = this.keys.get(key);
    if (!state) {
      state = {
        key,
        parallelismMax: 0,
        parallelismCount: 0,
        rateMax: 0,
        rateCount: 0,
        ratePeriodS: DEFAULT_RATE_PERIOD_S,
        periodStartVirtual: this.clock.virtualNow(),
        paused: false,
        pinnedParallelism: false,
        pinnedRate: false,
        waitListSize: 0,
        releaseArmed: false,
      };
      this.keys.set(key, state);
    }
    return state;
  }

  private rollPeriod(state: FlowControlState): void {
    const now = this.clock.virtualNow();
    const periodMs = state.ratePeriodS * 1000;
    if (now - state.periodStartVirtual >= periodMs) {
      state.periodStartVirtual += Math.floor((now - state.periodStartVirtual) / periodMs) * periodMs;
      state.rateCount = 0;
    }
  }
}
