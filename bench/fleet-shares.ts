/**
 * How a fleet row of bench/fleet.ts shared its job out over time: from each worker's chunk spans (when each chunk
 * started and ended, and its addresses), each worker's part of the job and the times it worked, and when all the
 * workers were busy. A job that starts with workers idle (too few chunks queued for them) or ends with one worker
 * alone (the others out of work while it finishes the chunks it holds) shows here, not in the summed split.
 * @module
 */

/** A chunk's span: its start and end in milliseconds since the epoch, and the addresses it verified. */
export type Span = readonly [start: number, end: number, addresses: number];

/** One worker's part of a job, its times in seconds from the job's start. */
export interface Share {
  readonly chunks: number;
  readonly addresses: number;
  /** When its first chunk started. */
  readonly firstS: number;
  /** When its last chunk ended. */
  readonly lastS: number;
  /** How long at least one of its chunks was under way. */
  readonly busyS: number;
}

/** The share of a worker whose chunks ran over `spans`, the job having started at `startedAt` (epoch ms). */
export function shareOf(spans: readonly Span[], startedAt: number): Share {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let busy = 0;
  let from = Number.NEGATIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const [start, end] of sorted) {
    if (start > to) {
      if (to > from) busy += to - from;
      from = start;
      to = end;
    } else to = Math.max(to, end);
  }
  if (to > from) busy += to - from;
  const seconds = (at: number) => (at - startedAt) / 1000;
  return {
    chunks: spans.length,
    addresses: spans.reduce((sum, span) => sum + span[2], 0),
    firstS: sorted.length === 0 ? Number.NaN : seconds(sorted[0]![0]),
    lastS: sorted.length === 0 ? Number.NaN : seconds(Math.max(...sorted.map((span) => span[1]))),
    busyS: busy / 1000,
  };
}

/** Lines that tell each worker's share and when every worker was at work, for a row of `wallMs`. */
export function shareLines(shares: readonly Share[], wallMs: number): string[] {
  const wall = wallMs / 1000;
  const lines = shares.map(
    (share, k) =>
      `    worker ${k + 1}: ${String(share.chunks).padStart(4)} chunks ${String(share.addresses).padStart(8)} addresses ` +
      `(${((100 * share.addresses) / Math.max(1, sum(shares, 'addresses'))).toFixed(0).padStart(3)}%), ` +
      `${share.firstS.toFixed(2)}-${share.lastS.toFixed(2)} s, busy ${share.busyS.toFixed(2)} s of ${wall.toFixed(2)}`,
  );
  if (shares.some((share) => share.chunks === 0)) lines.push('    a worker took no chunk');
  else if (shares.length > 1) {
    const allIn = Math.max(...shares.map((share) => share.firstS));
    const firstOut = Math.min(...shares.map((share) => share.lastS));
    lines.push(
      `    every worker at work from ${allIn.toFixed(2)} s to ${firstOut.toFixed(2)} s; ` +
        `${(wall - firstOut).toFixed(2)} s at the end with a worker out of chunks`,
    );
  }
  return lines;
}

const sum = (shares: readonly Share[], key: 'addresses') =>
  shares.reduce((total, share) => total + share[key], 0);
