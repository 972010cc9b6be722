/**
 * The layer rule of docs/architecture.md ("Layers"), checked by `npm run lint` (so by CI) with
 * dependency-cruiser: core <- seams <- jobs <- adapters; a lower layer never imports a higher one, not even a
 * type; an adapter never imports another adapter (shared parsing lives in src/io); the core, the bulk layer and
 * the HTTP handler import no `node:*` module; no import circle, type-only imports included.
 *
 * There are no exceptions: every rule holds for every file (issue 31 removed the last of the violations that
 * existed when the rule came). Do not add a known-violations list to get a change through; move the code.
 */

/**
 * The runtime-free core. verifier-with.ts (the core's verifier with the SMTP prober of src/smtp), verifier.ts
 * (createVerifier on Node's defaults) and node-runtime.ts are not in it.
 */
const CORE = [
  '^src/(syntax|typo|data|checks|io|contracts|known|net|classify)/',
  '^src/(verifier-core|runtime|options|option-fields|observer|result|result-json|score|errors|clock|envelope-options|abort-watch|weak-memo|turn|tracing|verify-trace|smtp-spans).ts$',
];
/** Node's built-in modules, as dependency-cruiser names them (without `node:`). */
const NODE_BUILTINS = `^(${[
  'assert',
  'async_hooks',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'http',
  'http2',
  'https',
  'module',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'string_decoder',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
].join('|')})($|/)`;
const SEAMS = '^src/(dns|smtp|webhooks)/';
/** Jobs and the host diagnosis: what the adapters run (the doctor's diagnose() is a library both mailvet doctor and
 * GET /v1/diagnostics expose, so it sits below them). */
const JOBS = '^src/(bulk|postgres|bullmq|doctor)/';
const ADAPTERS = '^src/(http|cli|console)/';
/**
 * The HTTP handler and its routes: everything in src/http but the Node listener (node.ts, node-request.ts,
 * light.ts) and the Node runtime module (node-runtime.ts: the console files and the heap-based limits).
 */
const HANDLER = { path: '^src/http/', pathNot: '^src/http/(node|node-request|light|node-runtime)\\.ts$' };

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circle, type-only imports included (tsPreCompilationDeps).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'core-runtime-free',
      comment: 'The core imports no Node built-in: Node defaults come through src/node-runtime.ts.',
      severity: 'error',
      from: { path: CORE },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-reaches-no-node',
      comment:
        'Nor does it reach one through another module (test/core-bundle.test.ts proves it by bundling).',
      severity: 'error',
      from: { path: CORE },
      to: { path: NODE_BUILTINS, reachable: true },
    },
    {
      name: 'bulk-runtime-free',
      comment: 'The bulk layer imports no Node built-in.',
      severity: 'error',
      from: { path: '^src/bulk/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'handler-runtime-free',
      comment: 'The HTTP handler and its routes see only Request and Response; the Node listener is node.ts.',
      severity: 'error',
      from: HANDLER,
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'handler-gets-its-platform',
      comment:
        "The handler and its routes get Node's defaults as an HttpPlatform: only createHandler (handler.ts), the " +
        'Node listener and the entry point import the Node runtime module (or createHandler, which reaches it).',
      severity: 'error',
      from: { path: '^src/http/', pathNot: '^src/http/(index|handler|node|node-runtime)\\.ts$' },
      to: { path: '^src/http/(node-runtime|handler)\\.ts$' },
    },
    {
      name: 'core-below-seams',
      comment: 'The core imports no seam, job or adapter module.',
      severity: 'error',
      from: { path: CORE },
      to: { path: [SEAMS, JOBS, ADAPTERS] },
    },
    {
      name: 'seams-below-jobs',
      comment: 'A seam imports no job or adapter module (webhooks declares what it reads of a job).',
      severity: 'error',
      from: { path: SEAMS },
      to: { path: [JOBS, ADAPTERS] },
    },
    {
      name: 'jobs-below-adapters',
      comment: 'The job layer (and the doctor) imports no adapter.',
      severity: 'error',
      from: { path: JOBS },
      to: { path: ADAPTERS },
    },
    {
      name: 'adapter-to-adapter',
      comment: 'An adapter never imports another adapter; what two adapters share lives in src/io.',
      severity: 'error',
      from: { path: '^src/(http|cli|console)/' },
      to: { path: ADAPTERS, pathNot: '^src/$1/' },
    },
    {
      name: 'api-server-for-the-cli',
      comment:
        'src/api-server.ts puts the HTTP adapter together for `mailvet serve` (so that the CLI does not import it): ' +
        'only the CLI imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/api-server\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'] },
  },
};
