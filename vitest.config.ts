import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { slowFirstSequencer } from './test/support/slow-first.js';

/**
 * Test files that start processes or open sockets (loopback servers, HTTP over a socket, DNS over UDP), or that
 * need PostgreSQL, PGlite, Redis, Chromium or Postfix. Every other file is a unit test, and the unit project's
 * setup (test/support/unit-guard.ts) fails a unit test that opens a socket or starts a process, so a file that
 * does belongs here.
 */
const INTEGRATION = [
  'test/bullmq/{adaptive,cleanup,connection,failure,finish,fleet,health,known-results,outage,processes,stored-key-webhooks,webhooks}.test.ts',
  'test/checks/{mx,reason}.test.ts',
  'test/cli/{doctor,finish-spawn,keys,keys-webhooks,lazy-loading,serve,serve-logs,serve-webhook-restart,serve-webhooks,shutdown,spawn,spawn-progress,stream,verify,worker}.test.ts',
  'test/console/{browser,list-file}.test.ts',
  'test/data/lists.test.ts',
  'test/dns/{cached,hostile,node}.test.ts',
  'test/doctor/diagnose.test.ts',
  'test/e2e/**/*.test.ts',
  'test/known/{bulk,serve,verifier}.test.ts',
  'test/http/{client-abort,diagnostics,events,frameworks,hono,list-upload,node,quota,store-keys}.test.ts',
  'test/http/{generated-client,results-json,server-hardening,source-rows,spec-flow,stream-failure,timeout}.test.ts',
  'test/metrics/{cli-metrics,prometheus}.test.ts',
  'test/core-bundle.test.ts', // esbuild runs as a child process
  'test/package.test.ts',
  'test/postgres/**/*.test.ts',
  'test/smtp/{desync,desync-fuzz,error-limits,hostile,mx-backoff,pipelined-quit,quit,session-limit}.test.ts',
  'test/smtp/{budgets,session-pipelining,session-smtp-server,stalled-mx,transports}.test.ts',
  'test/webhooks/{notifier,transport}.test.ts',
  'test/bullmq/{redis-limits,usage}.test.ts', // usage and key limits on Redis and a fleet
  'test/http/usage-shared.test.ts', // key limits of two API nodes on PGlite, PostgreSQL and Redis
];

/**
 * Integration files that keep the CPU busy rather than wait: jobs of 3,000 to 9,000 addresses against loopback
 * servers (in process or in spawned fleets), PGlite in spawned `mailvet serve --data` processes, Chromium, lists of
 * 200,000 lines or 64 MiB.
 * Five at once on two cores starved each other's SMTP probes and timers past the tests' deadlines when their jobs
 * were three times larger; they run three at a time, after the rest, longest first, so that the workers end
 * together. Order by a clean-clone `.ci/run` on the idle 2-core machine (seconds, with the beforeAll of each file):
 * processes 43, serve-webhook-restart 32, outage 26, fleet 26, keys 25, keys-webhooks 24, browser ~20 (54 before its
 * upload went from 2,000 rows to 600), crash 23, ... events 1.
 */
const HEAVY = [
  'test/bullmq/processes.test.ts',
  'test/cli/serve-webhook-restart.test.ts', // spawned serve killed and started again
  'test/bullmq/outage.test.ts',
  'test/bullmq/fleet.test.ts',
  'test/cli/keys.test.ts',
  'test/cli/keys-webhooks.test.ts', // spawned serve and keys commands on PGlite and PostgreSQL, restarted
  'test/console/browser.test.ts',
  'test/postgres/crash.test.ts',
  'test/postgres/durable-manager.test.ts',
  'test/postgres/dir-lock.test.ts',
  'test/known/serve.test.ts',
  'test/cli/shutdown.test.ts',
  'test/cli/finish-spawn.test.ts',
  'test/postgres/store-contract.test.ts',
  'test/console/list-file.test.ts', // a file over 64 MiB read in slices
  'test/postgres/data-dir-permissions.test.ts',
  'test/cli/spawn.test.ts',
  'test/cli/stream.test.ts', // 200,000 lines through the CLI
  'test/http/node.test.ts', // 1,000 SSE clients, a 10,000-address flow, a large NDJSON download
  'test/http/events.test.ts',
];

/**
 * Files that start first in their project, longest first (HEAVY begins with its longest), so that none of them begins
 * near the end of a run and holds it up alone while the other workers sit idle (see test/support/slow-first.ts).
 */
const SLOW_FIRST = [
  ...HEAVY,
  'test/e2e/postfix.test.ts',
  'test/postgres/damaged-store.test.ts',
  'test/package.test.ts',
  'test/metrics/prometheus.test.ts',
];

// A file renamed or removed would silently leave these lists (and run late, or beside too many others): refuse it.
for (const file of SLOW_FIRST) {
  if (!existsSync(new URL(file, import.meta.url)))
    throw new Error(`vitest.config.ts names ${file}, which does not exist`);
}

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    sequence: { sequencer: slowFirstSequencer(SLOW_FIRST) },
    coverage: { provider: 'v8', include: ['src/**'], reporter: ['text-summary'] },
    // vitest's default of availableParallelism - 1 workers is one worker on a 2-core machine: every file would run
    // alone, though most integration files spend their time waiting on child processes, sockets and databases.
    // Projects with different worker counts run one after the other (sequence.groupOrder): unit, integration, heavy.
    // `--project "integration*"` runs both integration projects.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: INTEGRATION,
          setupFiles: ['test/support/unit-guard.ts'],
          // CPU-bound: one worker per core. A worker keeps its module cache from file to file (isolate: false):
          // importing src/ again for each of ~130 files cost two thirds of the project's CPU time. Unit files leave
          // no global state behind (spies and timers are restored, process.env put back); a run with
          // --sequence.shuffle.files proves that no file depends on what ran before it.
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: INTEGRATION,
          exclude: HEAVY,
          // Mostly waiting (spawned CLIs, loopback servers, PostgreSQL, Redis, Postfix): several files at once. Each
          // file uses its own ports, schemas, key prefixes and directories, so files may run side by side.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-heavy',
          include: HEAVY,
          maxWorkers: 3,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
