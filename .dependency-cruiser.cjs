/**
 * The layer rule of docs/architecture.md ("Layers"), checked by `npm run lint` (so by CI) with
 * dependency-cruiser: core <- seams <- jobs <- adapters; a lower layer never imports a higher one, not even a
 * type; an adapter never imports another adapter (shared parsing lives in src/io); the core, the bulk layer and
 * the HTTP handler import no `node:*` module; no import circle, type-only imports included.
 *
 * EXCEPTIONS below lists each violation that exists today, by file, with why and who removes it. It is matched
 * exactly (the same edge, or a circle of the same modules): any new violation fails the lint.
 */

/** The runtime-free core. verifier.ts (createVerifier on Node's defaults) and node-runtime.ts are not in it. */
const CORE = [
  '^src/(syntax|typo|data|checks|io|contracts|known)/',
  '^src/(verifier-core|runtime|options|option-fields|observer|result|result-json|score|errors|clock|envelope-options|abort-watch|weak-memo|turn|tracing|verify-trace|smtp-spans)\.ts$',
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

/**
 * Today's violations: [rule, from, to, why]. For a circle, `to` is the list of its modules. Remove an entry
 * when its file is fixed (dependency-cruiser then reports nothing for it; an entry that matches nothing is
 * harmless but should go).
 */
const EXCEPTIONS = [
  // --- The core calls a few seam modules beyond their interfaces (which live in the core, src/contracts/).
  // Follow-up: move what the core uses of them (the address guard, name helpers, reply classification and
  // provider profiles) into the core; the pool is reached through the runtime.
  ['core-below-seams', 'checks/mx', 'dns/guard', 'the MX check guards the addresses it resolved'],
  ['core-below-seams', 'checks/mx', 'dns/name', 'the MX check looks up names'],
  ['core-below-seams', 'checks/smtp-probe', 'smtp/classify', 'the SMTP check classifies replies'],
  ['core-below-seams', 'checks/smtp-probe', 'smtp/pool', 'the SMTP check leases pooled sessions'],
  ['core-below-seams', 'checks/smtp-probe', 'smtp/provider', 'the SMTP check names the provider'],
  [
    'core-below-seams',
    'checks/smtp-probe',
    'smtp/providers/profiles',
    "the SMTP check applies the provider's profile",
  ],
  ['core-below-seams', 'checks/smtp-probe', 'smtp/reply', 'the SMTP check prints replies'],
  ['core-below-seams', 'runtime', 'smtp/prober', 'the runtime makes the SMTP pools'],
  ['core-below-seams', 'options', 'dns/guard', 'allowAddresses is parsed by the guard'],
];

/** A module is named without src/ and .ts above. */
const file = (name) => `src/${name}.ts`;

/** EXCEPTIONS in dependency-cruiser's known-violations form. */
const knownViolations = EXCEPTIONS.map(([rule, from, to]) =>
  Array.isArray(to)
    ? {
        type: 'cycle',
        from: file(to[0]),
        to: file(to[1]),
        rule: { name: rule, severity: 'error' },
        cycle: to.map((name) => ({ name: file(name), dependencyTypes: [] })),
      }
    : { type: 'dependency', from: file(from), to: file(to), rule: { name: rule, severity: 'error' } },
);

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
    knownViolations,
  },
};
