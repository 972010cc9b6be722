/**
 * An OpenTelemetry SDK for span tests: `@opentelemetry/sdk-trace-base`'s `BasicTracerProvider` with an
 * `InMemorySpanExporter` behind a `SimpleSpanProcessor`, registered globally, and a context manager on
 * `AsyncLocalStorage` (what `@opentelemetry/context-async-hooks` provides to applications; not a dependency here)
 * so that the span active in an HTTP request or a chunk is the parent of the verifications made in it.
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  SpanKind,
  trace,
} from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  type Sampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A {@link ContextManager} that keeps the active context across `await`s with `AsyncLocalStorage`. */
class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]) =>
      this.with(context, target as (...a: unknown[]) => unknown, undefined, ...args);
    return run as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/** A registered SDK: its finished spans, and how to unregister it. */
export interface TestSdk {
  /** The spans ended so far, in the order they ended. */
  spans(): ReadableSpan[];
  /** Forgets the spans ended so far. */
  reset(): void;
  /** Unregisters the provider and the context manager. */
  shutdown(): Promise<void>;
}

/** Registers an in-memory SDK globally (with `sampler` when given: the SDK's default samples every trace). */
export function registerTestSdk(sampler?: Sampler): TestSdk {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(sampler === undefined ? {} : { sampler }),
  });
  const manager = new AsyncLocalContextManager();
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** A span and its children, by name, for assertions on the shape of a trace. */
export interface SpanTree {
  readonly name: string;
  readonly children: SpanTree[];
}

/** The trees of `spans` (roots: spans whose parent is not among them), children in start order. */
export function spanTrees(spans: readonly ReadableSpan[]): SpanTree[] {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const byStart = [...spans].sort((a, b) => compareTime(a.startTime, b.startTime));
  const tree = (span: ReadableSpan): SpanTree => ({
    name: span.name,
    children: byStart
      .filter((child) => child.parentSpanContext?.spanId === span.spanContext().spanId)
      .map(tree),
  });
  return byStart
    .filter((span) => span.parentSpanContext === undefined || !ids.has(span.parentSpanContext.spanId))
    .map(tree);
}

function compareTime(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}

/** The "## Traces" section of docs/operations.md. */
function tracesDoc(): string {
  const markdown = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const start = markdown.indexOf('\n## Traces\n');
  if (start === -1) throw new Error('docs/operations.md has no "## Traces" section');
  const end = markdown.indexOf('\n## ', start + 1);
  return end === -1 ? markdown.slice(start) : markdown.slice(start, end);
}

/**
 * The names of `spans` and of their attributes that docs/operations.md's "Traces" section does not name (in
 * backticks): a check's span is documented as `mailvet.check.<name>`, a server span as `{method} {route}`.
 */
export function undocumented(spans: readonly ReadableSpan[]): string[] {
  const doc = tracesDoc();
  const missing = new Set<string>();
  for (const span of spans) {
    const name = span.name.startsWith('mailvet.check.')
      ? 'mailvet.check.<name>'
      : span.kind === SpanKind.SERVER
        ? '{method} {route}'
        : span.name;
    for (const term of [name, ...Object.keys(span.attributes)]) {
      if (!doc.includes(`\`${term}\``)) missing.add(term);
    }
  }
  return [...missing];
}
