// The delivery service's state and behaviour, independent of HTTP: publishing to URLs and URL
// Groups with de-duplication, the dispatcher, schedules, queues, the log and the knobs.
import { ScaledClock, TimerQueue } from '../clock.js';
import { contentDedupKey, DedupIndex, idDedupKey } from './dedup.js';
import type { Destination } from './destination.js';
import { Dispatcher } from './dispatcher.js';
import { DlqStore } from './dlq.js';
import { FlowControlStore } from './flow-control.js';
import { EmulatorInputError } from '../errors.js';
import { HttpDelivery, type RequestSigner } from './http-delivery.js';
import { ACCOUNT_LIMITS } from '../management/plans.js';
import { mergeKnobs, parseKnobsPatch, type Knobs } from '../knobs.js';
import { LogStore, type GroundTruth } from './log-store.js';
import type { AttemptOutcome, FinalOutcome } from './message.js';
import type { MessageSpec } from './message-options.js';
import { PLAN_DEFAULTS, type PlanDefaults, type PlanProfile, type ResolvedOptions } from '../options.js';
import { QueueStore } from './queues.js';
import { SeededRandom } from '../random.js';
import { ScheduleStore, type Schedule } from './schedules.js';
import { createRequestSigner, SigningKeys } from './signing.js';
import { UrlGroupStore } from './url-groups.js';
import { WorkflowStore } from './workflows.js';

export interface PublishRequest {
  destination: Destination;
  spec: MessageSpec;
  body: Buffer;
  queueName?: string;
  scheduleId?: string;
  callerIP?: string;
  workflowRunId?: string;
  extraHeaders?: Record<string, string>;
  onFinal?: (messageId: string, outcome: FinalOutcome) => void;
  onAttempt?: (messageId: string, outcome: AttemptOutcome) => void;
}

export interface PublishResult {
  messageId: string;
  url: string;
  deduplicated?: true;
}

export class DeliveryService {
  readonly clock: ScaledClock;
  readonly timers: TimerQueue;
  readonly log: LogStore;
  readonly queues: QueueStore;
  readonly groups: UrlGroupStore;
  readonly schedules: ScheduleStore;
  readonly flowControl: FlowControlStore;
  /** Messages that failed for good; as many as the plan's max_dlq_size. */
  readonly dlq: DlqStore;
  /** Workflow runs started by /v2/trigger (workflows.ts). */
  readonly workflows: WorkflowStore;
  readonly dispatcher: Dispatcher;
  /** PRNG of the fault knobs (seeded, so ratios repeat). */
  readonly random: SeededRandom;
  /** Keys deliveries are signed with; GET /v2/keys and POST /v2/keys/rotate read and rotate them. */
  readonly signingKeys: SigningKeys;
  private readonly dedup: DedupIndex;
  private readonly http: HttpDelivery;
  private currentKnobs: Knobs;

  /** Where the plan comes from: the management account's current plan once it is attached. */
  private planSource: () => PlanProfile;

  constructor(
    readonly options: ResolvedOptions,
    report: (line: string) => void = () => undefined,
    signer?: RequestSigner,
  ) {
    this.planSource = () => options.plan;
    this.currentKnobs = options.knobs;
    this.clock = new ScaledClock(options.knobs.timeScale);
    this.timers = new TimerQueue(this.clock);
    // Its own PRNG, so a visibility lag leaves the fault sequence of a seed unchanged.
    const lagRandom = new SeededRandom(options.seed + 1);
    this.log = new LogStore(options.knobs.logRetention, Date.now, () => {
      const max = this.currentKnobs.logVisibilityLagMaxMs;
      return max > 0 ? Math.floor(lagRandom.next() * (max + 1)) : 0;
    });
    this.log.setRetentionAge(retentionAge(options.knobs));
    const now = (): number => this.clock.now();
    this.queues = new QueueStore(now);
    this.groups = new UrlGroupStore(now);
    this.flowControl = new FlowControlStore(this.clock);
    this.dlq = new DlqStore(now, () => ACCOUNT_LIMITS[this.planSource()].max_dlq_size);
    this.workflows = new WorkflowStore(now);
    this.dedup = new DedupIndex(() => this.clock.virtualNow());
    this.random = new SeededRandom(options.seed);
    this.http = new HttpDelivery(options.headerPrefix);
    this.signingKeys = new SigningKeys({ current: options.currentSigningKey, next: options.nextSigningKey });
    this.dispatcher = new Dispatcher({
      clock: this.clock,
      timers: this.timers,
      log: this.log,
      queues: this.queues,
      flowControl: this.flowControl,
      dlq: this.dlq,
      http: this.http,
      headerPrefix: options.headerPrefix,
      region: options.region,
      concurrency: options.concurrency,
      allowRemoteDestinations: options.allowRemoteDestinations,
      planTimeoutMs: () => this.plan.timeoutMs,
      signer: signer ?? createRequestSigner(this.signingKeys, options.headerPrefix),
      report,
    });
    this.schedules = new ScheduleStore(this.clock, this.timers, (schedule) => this.fireSchedule(schedule));
  }

  get knobs(): Knobs {
    return { ...this.currentKnobs, faultScope: [...this.currentKnobs.faultScope] };
  }

  /** Defaults of the plan in force (retries, timeout); follows plan changes of the management account. */
  get plan(): PlanDefaults {
    return PLAN_DEFAULTS[this.planSource()];
  }

  usePlanSource(source: () => PlanProfile): void {
    this.planSource = source;
  }

  /** Validates and applies a knob patch; throws EmulatorKnobError naming the knob. */
  setKnobs(patch: unknown): Knobs {
    const valid = parseKnobsPatch(patch);
    this.currentKnobs = mergeKnobs(this.currentKnobs, valid);
    if (valid.timeScale !== undefined && valid.timeScale !== this.clock.timeScale) {
      this.clock.setScale(valid.timeScale);
      this.timers.rearm();
    }
    if (valid.logRetention !== undefined) this.log.setRetention(valid.logRetention);
    if (valid.logRetentionAgeMs !== undefined || valid.timeScale !== undefined)
      this.log.setRetentionAge(retentionAge(this.currentKnobs));
    return this.knobs;
  }

  /** Decrements a one-shot counter knob; true when it was positive. */
  takeOneShot(knob: 'failNext' | 'malformedNext' | 'truncatedNext' | 'repeatCursorNext' | 'dailyLimitNext'): boolean {
    if (this.currentKnobs[knob] <= 0) return false;
    this.currentKnobs[knob]--;
    return true;
  }

  groundTruth(): GroundTruth {
    return this.log.groundTruth();
  }

  /**
   * Publishes one message per target (the URL, or every endpoint of the URL Group). A duplicate
   * within the de-duplication window is not sent; its result names the earlier message.
   */
  publish(request: PublishRequest): PublishResult[] {
    const { spec, body } = request;
    const targets: Array<{ url: string; topicName?: string; endpointName?: string }> = [];
    if (request.destination.kind === 'group') {
      const group = this.groups.require(request.destination.name);
      if (group.endpoints.length === 0) {
        throw new EmulatorInputError('destination', `url group ${group.name} has no endpoints`);
      }
      for (const endpoint of group.endpoints)
        targets.push({ url: endpoint.url, topicName: group.name, endpointName: endpoint.name });
    } else {
      targets.push({ url: request.destination.url });
    }
    if (request.queueName !== undefined) this.queues.ensure(request.queueName);

    const results: PublishResult[] = [];
    for (const target of targets) {
      const dedupKey = spec.deduplicationId
        ? idDedupKey(spec.deduplicationId, target.url)
        : spec.contentBasedDeduplication
          ? contentDedupKey(target.url, body, spec.headers)
          : undefined;
      const earlier = dedupKey !== undefined ? this.dedup.lookup(dedupKey) : undefined;
      if (earlier !== undefined) {
        results.push({ messageId: earlier, url: target.url, deduplicated: true });
        continue;
      }
      const message = this.dispatcher.submit(
        {
          kind: 'message',
          url: target.url,
          method: spec.method,
          headers: spec.headers,
          body,
          timeoutMs: spec.timeoutMs ?? this.plan.timeoutMs,
          retries: spec.retries,
          retryDelay: spec.retryDelay,
          labels: spec.labels,
          redact: spec.redact,
          queueName: request.queueName,
          topicName: target.topicName,
          endpointName: target.endpointName,
          scheduleId: request.scheduleId,
          workflowRunId: request.workflowRunId,
          callerIP: request.callerIP,
          notBefore: spec.notBeforeMs,
          callback: spec.callback,
          failureCallback: spec.failureCallback,
          flowControl: spec.flowControl,
          extraHeaders: request.extraHeaders,
          onFinal: request.onFinal,
          onAttempt: request.onAttempt,
        },
        spec.delayMs,
      );
      if (dedupKey !== undefined) this.dedup.remember(dedupKey, message.id);
      results.push({ messageId: message.id, url: target.url });
    }
    return results;
  }

  /** Forgets messages, schedules, URL Groups, queues, flow-control keys, the DLQ, de-duplication ids and the log (knobs stay). */
  reset(): void {
    this.dispatcher.reset();
    this.flowControl.clear();
    this.dlq.clear();
    this.schedules.clear();
    this.timers.clear();
    this.groups.clear();
    this.queues.clear();
    this.dedup.clear();
    this.log.reset();
    this.workflows.clear();
  }

  async close(): Promise<void> {
    this.dispatcher.reset();
    this.schedules.clear();
    this.timers.close();
    await this.http.close();
  }

  private fireSchedule(schedule: Schedule): string[] {
    const results = this.publish({
      destination: schedule.destination,
      spec: schedule.spec,
      body: schedule.body,
      queueName: schedule.queueName,
      scheduleId: schedule.scheduleId,
      callerIP: schedule.callerIP,
      onFinal: (messageId, outcome) => this.schedules.settle(schedule.scheduleId, messageId, outcome),
    });
    return results.filter((result) => !result.deduplicated).map((result) => result.messageId);
  }
}

/** The age retention in wall milliseconds: like every wait of the emulator, it runs timeScale times faster. */
function retentionAge(knobs: Knobs): number | null {
  return knobs.logRetentionAgeMs === null ? null : knobs.logRetentionAgeMs / knobs.timeScale;
}
