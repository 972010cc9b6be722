/**
 * The tally cells and histogram of src/metrics/tally.ts: a scrape writes what prom-client's own `Histogram`
 * writes for the same observations, so moving a series onto them leaves /metrics unchanged.
 */
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { labelCells, observeIn, tallyHistogram } from '../../src/metrics/tally.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
/** Values on, between, below and above the bounds, some twice. */
const VALUES = [0, 0.001, 0.0005, 0.002, 0.01, 0.05, 0.1, 0.5, 1, 2, 30, 0.05];

describe('tallyHistogram', () => {
  it("writes the exposition prom-client's Histogram writes, with labels", async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const name = 'x_duration_seconds';
    const help = 'How long x took, in seconds.';
    const histogram = new Histogram({ name, help, labelNames: ['method', 'route'], buckets: BUCKETS });
    theirs.registerMetric(histogram);
    const tally = tallyHistogram({ name, help, buckets: BUCKETS, registers: [ours] });
    const cells = labelCells(['method', 'route'], (labels) => tally.cell(labels));
    for (const [index, value] of VALUES.entries()) {
      const route = index % 3 === 0 ? '/v1/verify' : '/v1/bulk/{id}';
      histogram.observe({ method: 'GET', route }, value);
      observeIn(cells.at('GET', route), tally.bounds, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(await ours.metrics()).toContain(
      'x_duration_seconds_bucket{le="0.01",method="GET",route="/v1/verify"} 2',
    );
  });

  it('writes an unlabelled histogram with its zeros before the first observation, then its counts', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const name = 'y_seconds';
    const histogram = new Histogram({ name, help: 'y', buckets: BUCKETS, registers: [theirs] });
    const tally = tallyHistogram({ name, help: 'y', buckets: BUCKETS, registers: [ours] });
    const cell = tally.cell({});
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const value of VALUES) {
      histogram.observe(value);
      observeIn(cell, tally.bounds, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('y_seconds_count 12');
    ours.resetMetrics();
    expect(await ours.metrics()).toContain('y_seconds_count 0');
  });
});

describe('labelCells', () => {
  it('gives the same cell for the same label values and a new one for others, with its labels', () => {
    const cells = labelCells(['a', 'b', 'c'], (labels) => ({ labels, n: 0 }));
    cells.at('1', '2', '3').n += 1;
    cells.at('1', '2', '3').n += 1;
    cells.at('1', '2', '4').n += 1;
    cells.at('2', '2', '3').n += 1;
    expect(cells.all()).toEqual([
      { labels: { a: '1', b: '2', c: '3' }, n: 2 },
      { labels: { a: '1', b: '2', c: '4' }, n: 1 },
      { labels: { a: '2', b: '2', c: '3' }, n: 1 },
    ]);
  });
});
