/**
 * Counts kept in plain objects on the hot path (a request, a verification) and handed to prom-client's registry
 * only when it is scraped: cells found through one `Map` per label (no key string, no label object, no hashing per
 * observation), and a histogram whose exposition is the one prom-client's `Histogram` writes.
 * @module
 */
import type { Registry } from 'prom-client';

/**
 * Cells by label values, made on first use: `at(a, b, c)` walks one `Map` per label, so a lookup with strings the
 * process already holds (route templates, status names) builds nothing. The label values must come from bounded
 * sets (the caller maps anything else to `other`), so the cells stay bounded too.
 */
export interface LabelCells<C> {
  /** The cell of these label values (as many as the label names; a missing one is `''`). */
  at(first: string, second: string, third?: string): C;
  /** Every cell made so far, in the order they were made. */
  all(): readonly C[];
}

/** The map under `key` in `map`, made on first use. */
function levelOf<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  const found = map.get(key);
  if (found !== undefined) return found;
  const made = new Map<string, V>();
  map.set(key, made);
  return made;
}

/** Makes {@link LabelCells} for `labelNames` (two or three), each cell made by `make` from its labels. */
export function labelCells<C>(
  labelNames: readonly [string, string] | readonly [string, string, string],
  make: (labels: Readonly<Record<string, string>>) => C,
): LabelCells<C> {
  const root = new Map<string, Map<string, Map<string, C>>>();
  const cells: C[] = [];
  const [firstName, secondName, thirdName] = labelNames;
  return {
    at(first, second, third = '') {
      const leaf = levelOf(levelOf(root, first), second);
      const cell = leaf.get(third);
      if (cell !== undefined) return cell;
      const labels: Record<string, string> = { [firstName]: first, [secondName]: second };
      if (thirdName !== undefined) labels[thirdName] = third;
      const made = make(labels);
      cells.push(made);
      leaf.set(third, made);
      return made;
    },
    all: () => cells,
  };
}

/** The observations of one label set of a {@link TallyHistogram}. */
export interface HistogramCell {
  /** The label set. */
  readonly labels: Readonly<Record<string, string>>;
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** Adds `value` to `cell`, whose buckets have the upper `bounds` (ascending). */
export function observeIn(cell: HistogramCell, bounds: readonly number[], value: number): void {
  let index = 0;
  while (index < bounds.length && value > (bounds[index] as number)) index++;
  (cell.counts[index] as number) += 1;
  cell.sum += value;
  cell.count += 1;
}

/** Options of {@link tallyHistogram}: those of prom-client's `Histogram` that mailvet uses. */
export interface TallyHistogramOptions {
  readonly name: string;
  readonly help: string;
  /** Upper bounds of the buckets, ascending. */
  readonly buckets: readonly number[];
  /** Registries it is registered in. */
  readonly registers: readonly Registry[];
}

/** A sample of an exposition, in the shape prom-client's registry formats (`sharedLabels` after `labels`). */
interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly sharedLabels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly metricName: string;
  /** `null` on buckets, as prom-client's (no exemplars). */
  readonly exemplar?: null;
}

/** A histogram kept in {@link HistogramCell}s, served by prom-client's registry. */
export interface TallyHistogram {
  /** The metric's name. */
  readonly name: string;
  /** A new cell for `labels`, in the exposition from now on (keep it: each call makes another). */
  cell(labels: Readonly<Record<string, string>>): HistogramCell;
  /** The bucket bounds, for {@link observeIn}. */
  readonly bounds: readonly number[];
}

/**
 * A histogram whose observations are counted in plain cells ({@link observeIn}) and written by prom-client's
 * registry exactly as its own `Histogram` writes them (`_bucket` with `le`, cumulative, then `+Inf`, `_sum` and
 * `_count`, per label set in the order the sets were first seen). prom-client's `Histogram.observe` hashes the
 * labels and looks each bucket up by a number made a string, on every observation.
 */
export function tallyHistogram(options: TallyHistogramOptions): TallyHistogram {
  const { name, help, registers } = options;
  const bounds = Object.freeze([...options.buckets]);
  const cells: HistogramCell[] = [];
  const samples = (): Sample[] => {
    const out: Sample[] = [];
    const bucket = `${name}_bucket`;
    for (const cell of cells) {
      let total = 0;
      for (const [index, bound] of bounds.entries()) {
        total += cell.counts[index] as number;
        out.push({
          labels: { le: bound },
          sharedLabels: cell.labels,
          value: total,
          metricName: bucket,
          exemplar: null,
        });
      }
      const shared = cell.labels;
      out.push({
        labels: { le: '+Inf' },
        sharedLabels: shared,
        value: cell.count,
        metricName: bucket,
        exemplar: null,
      });
      out.push({ labels: {}, sharedLabels: shared, value: cell.sum, metricName: `${name}_sum` });
      out.push({ labels: {}, sharedLabels: shared, value: cell.count, metricName: `${name}_count` });
    }
    return out;
  };
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    bounds,
    cell(labels: Readonly<Record<string, string>>): HistogramCell {
      const cell: HistogramCell = { labels, counts: new Array(bounds.length + 1).fill(0), sum: 0, count: 0 };
      cells.push(cell);
      return cell;
    },
    /** What the registry formats as text. */
    getForPromString: async () => ({ name, help, type: 'histogram', values: samples(), aggregator: 'sum' }),
    /** The JSON form (`registry.getMetricsAsJSON()`): labels and shared labels in one object, as prom-client's. */
    get: async () => ({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: samples().map(({ labels, sharedLabels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    }),
    /** Sets every cell back to zero (`registry.resetMetrics()`); the label sets stay in the exposition. */
    reset(): void {
      for (const cell of cells) {
        cell.counts.fill(0);
        cell.sum = 0;
        cell.count = 0;
      }
    },
  };
  for (const registry of registers) registry.registerMetric(metric as never);
  return metric;
}
