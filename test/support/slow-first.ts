/**
 * The test sequencer of vitest.config.ts: vitest's own order (by the durations of the last run on this checkout,
 * else larger files first), except that the files named in `slowFirst` start before the rest of their project.
 * A clean clone (CI) has no durations yet, and a long file that starts last would run alone at the end of the run
 * while the other workers sit idle.
 * @module
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** A sequencer class that starts `slowFirst` (paths from the repository root, in that order) first. */
export function slowFirstSequencer(slowFirst: readonly string[]): typeof BaseSequencer {
  const rank = new Map(slowFirst.map((path, index) => [path, index]));
  return class SlowFirstSequencer extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const key = (spec: TestSpecification) => rank.get(relative(spec.project.config.root, spec.moduleId));
      // Stable: within a project, the named files first (in their order), the others in vitest's order. Projects
      // stay where vitest put them (one group after another).
      const position = new Map(sorted.map((spec, index) => [spec, index]));
      return [...sorted].sort((a, b) => {
        if (a.project !== b.project) return position.get(a)! - position.get(b)!;
        const ka = key(a) ?? Number.POSITIVE_INFINITY;
        const kb = key(b) ?? Number.POSITIVE_INFINITY;
        return ka === kb ? position.get(a)! - position.get(b)! : ka - kb;
      });
    }
  };
}
