/**
 * `npx tsx test/support/stamp-dist.ts`, run by `.ci/run` right after `npm run build`: records dist/ as built from
 * the current sources, so that the tests' ensureBuiltDist finds it fresh instead of building it again inside the
 * test run (while the files that spawn the bin wait for it).
 * @module
 */
import { stampBuiltDist } from './built-dist.js';

await stampBuiltDist();
