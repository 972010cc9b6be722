/**
 * The one choice a {@link LocalEngine} makes about its store, durable or not: the objects that differ by it (the
 * {@link ResultSink}'s writes, the job inputs and the leases), built once. From then on the engine calls objects,
 * never an `if` per method. See docs/architecture.md, "The local engine".
 * @module
 */
import type { WebhookShare } from '../webhooks/share.js';
import type { LiveJob } from './job.js';
import { isDurableStore, type JobStore } from './job-types.js';
import { type JobLeases, leaseKeeper, processLeases } from './leases.js';
import { durableResults, memoryResults, ResultSink, type SinkContext } from './sink.js';
import { storeWebhookShare } from './store-share.js';
import type { JobError } from './types.js';
import { type InputsContext, inputWindow, type JobInputs, memoryInputs } from './window.js';

/** The engine's objects that depend on its store. */
export interface StoreObjects {
  /** True when the store keeps source rows. */
  readonly keepsRows: boolean;
  /** How results reach the store. */
  readonly sink: ResultSink;
  /** Where addresses wait. */
  readonly inputs: JobInputs;
  /** Who holds a job. */
  readonly leases: JobLeases;
  /** Where jobs' webhooks outlive a restart (a durable store's), or `undefined` (they live in memory). */
  readonly webhookShare: WebhookShare | undefined;
}

/** What the leases reach of the engine (the sink's and the inputs' contexts are given whole). */
export interface EngineHooks {
  /** The engine's jobs by id: a durable store's leases add the jobs they find in it. */
  readonly jobs: Map<string, LiveJob>;
  /** True once the engine is closing: no more claims. */
  closing(): boolean;
  /** Fails a job (an unfinished job of a process that closes). */
  fail(job: LiveJob, error: JobError): void;
  /** Forgets a job (deleted by the process that held it). */
  forget(job: LiveJob): void;
  /** Wakes the streams of a job that moved. */
  wake(job: LiveJob): void;
  /** Starts verifications. */
  pump(): void;
}

/**
 * The sink, inputs and leases of an engine on `store`: `durableResults`, `inputWindow` and `leaseKeeper` for a
 * durable store (and its webhook share); `memoryResults`, `memoryInputs` and `processLeases` for any other.
 */
export function storeObjects(
  store: JobStore,
  perDomain: number,
  contexts: { readonly sink: SinkContext; readonly inputs: InputsContext },
  hooks: EngineHooks,
): StoreObjects {
  if (isDurableStore(store)) {
    const sink = new ResultSink(store, durableResults(store, contexts.sink), contexts.sink);
    const window = inputWindow(store, perDomain, contexts.inputs);
    const leases = leaseKeeper(store, {
      jobs: hooks.jobs,
      closing: hooks.closing,
      restore: (job) => window.restore(job),
      resumed: (job) => {
        if (job.status === 'processing') sink.scheduleFlush(job);
        window.refill(job);
        hooks.wake(job);
      },
      forget: hooks.forget,
      wake: hooks.wake,
      pump: hooks.pump,
    });
    return { keepsRows: true, sink, inputs: window, leases, webhookShare: storeWebhookShare(store) };
  }
  const sink = new ResultSink(store, memoryResults(store, contexts.sink), contexts.sink);
  return {
    keepsRows: store.putRows !== undefined && store.getRows !== undefined,
    sink,
    inputs: memoryInputs(store, perDomain, contexts.inputs),
    leases: processLeases({ fail: hooks.fail, sync: (job) => sink.sync(job) }),
    webhookShare: undefined,
  };
}
