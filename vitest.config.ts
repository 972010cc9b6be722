import { defineConfig } from 'vitest/config';

/**
 * Test files that start processes or open sockets (loopback servers, HTTP over a socket, DNS over UDP), or that
 * need PostgreSQL, PGlite, Redis, Chromium or Postfix. Every other file is a unit test, and the unit project's
 * setup (test/support/unit-guard.ts) fails a unit test that opens a socket or starts a process, so a file that
 * does belongs here.
 */
const INTEGRATION = [
  'test/bullmq/{adaptive,cleanup,connection,failure,finish,fleet,health,known-results,outage,processes,stored-key-webhooks,webhooks}.test.ts',
  'test/checks/{mx,reason}.test.ts',
  'test/cli/{doctor,finish-spawn,keys,keys-webhooks,lazy-loading,serve,serve-logs,serve-webhooks,shutdown,spawn,spawn-progress,stream,verify,worker}.test.ts',
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

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    coverage: { provider: 'v8', include: ['src/**'], reporter: ['text-summary'] },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: INTEGRATION,
          setupFiles: ['test/support/unit-guard.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: INTEGRATION },
      },
    ],
  },
});
