/**
 * mailvet's OpenTelemetry spans (docs/operations.md, "Traces"): a verification and its checks, SMTP sessions and
 * command groups, the catch-all probe, HTTP requests and fleet chunks. Runtime-free.
 *
 * Nothing is recorded, loaded or allocated unless the application registered a tracer provider (an OpenTelemetry
 * SDK) with `@opentelemetry/api`: until then {@link tracingApi} answers `undefined` after one property read, so
 * neither a verification nor the cold start of `mailvet verify` pays for tracing (importing the API alone takes
 * ~20 ms). Once a provider is registered, the API is imported on first need and each span is started only when its
 * parent records: a verification whose span is not sampled starts no child span.
 *
 * Spans carry no address, local part or address domain; errors are recorded by their type (`error.type`: an
 * error's `code` or `kind`), never by their message, which may quote an SMTP reply that quotes the address.
 * @module
 */
import type * as OpenTelemetryApi from '@opentelemetry/api';
import type { Attributes, Context, Span, SpanKind } from '@opentelemetry/api';

/** The `@opentelemetry/api` module, as mailvet loads it once a tracer provider is registered. */
export type TracingApi = typeof OpenTelemetryApi;

/** The instrumentation scope of mailvet's spans (the name of its tracer). */
export const TRACER_NAME = 'mailvet';

/** Where `@opentelemetry/api` 1.x keeps its registered globals (its `global-utils`); `trace` once a provider is set. */
const API_GLOBALS = Symbol.for('opentelemetry.js.api.1');

let loaded: TracingApi | undefined;
let loading: Promise<TracingApi | undefined> | undefined;

function providerRegistered(): boolean {
  const globals = (globalThis as Record<symbol, { readonly trace?: unknown } | undefined>)[API_GLOBALS];
  return globals?.trace !== undefined;
}

/**
 * The OpenTelemetry API when a tracer provider is registered (a promise of it the first time, while it is
 * imported), else `undefined`. The API's own registry is read, so a provider registered by any copy of
 * `@opentelemetry/api` 1.x counts.
 */
export function tracingApi(): TracingApi | Promise<TracingApi | undefined> | undefined {
  if (!providerRegistered()) return undefined;
  if (loaded !== undefined) return loaded;
  loading ??= import('@opentelemetry/api').then(
    (api) => {
      loaded = api;
      return api;
    },
    () => undefined, // not installed where this copy of mailvet runs: no spans
  );
  return loading;
}

/** A span being recorded, with the context its children start in. */
export interface TraceSpan {
  /** The span. */
  readonly span: Span;
  /** The context holding `span`: the parent of its children. */
  readonly context: Context;
  /** The API that made it. */
  readonly api: TracingApi;
}

/**
 * Starts span `name` under `parent` (default: the active context) on mailvet's tracer; `undefined` when the span
 * would not be recorded (the sampler dropped it), so that nothing below it is started either.
 */
export function startSpan(
  api: TracingApi,
  name: string,
  parent: Context | undefined,
  attributes?: Attributes,
  kind?: SpanKind,
): TraceSpan | undefined {
  const context = parent ?? api.context.active();
  const options: OpenTelemetryApi.SpanOptions = {};
  if (attributes !== undefined) options.attributes = attributes;
  if (kind !== undefined) options.kind = kind;
  const span = api.trace.getTracer(TRACER_NAME).startSpan(name, options, context);
  if (!span.isRecording()) return undefined;
  return { span, context: api.trace.setSpan(context, span), api };
}

/** Starts span `name` as a child of `parent`; `undefined` (nothing started) when `parent` is. */
export function childSpan(
  parent: TraceSpan | undefined,
  name: string,
  attributes?: Attributes,
): TraceSpan | undefined {
  return parent === undefined ? undefined : startSpan(parent.api, name, parent.context, attributes);
}

/**
 * What `error.type` says of an error: its `kind` (an `SmtpError`'s) or `code` when it has a string one, else its
 * `name`; `_OTHER` for a thrown non-error. Never the message.
 */
export function errorType(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '_OTHER';
  const { kind, code, name } = error as { kind?: unknown; code?: unknown; name?: unknown };
  if (typeof kind === 'string') return kind;
  if (typeof code === 'string') return code;
  return typeof name === 'string' ? name : '_OTHER';
}

/** Ends `trace` (nothing when `undefined`); with an `error`, marks it failed with the error's {@link errorType}. */
export function endSpan(trace: TraceSpan | undefined, error?: unknown): void {
  if (trace === undefined) return;
  if (error !== undefined) {
    const type = errorType(error);
    trace.span.setAttribute('error.type', type);
    trace.span.setStatus({ code: trace.api.SpanStatusCode.ERROR, message: type });
  }
  trace.span.end();
}
