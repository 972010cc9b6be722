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
  '^src/(syntax|typo|data|checks|io)/',
  '^src/(verifier-core|runtime|options|result|result-json|score|errors|clock|envelope-options|abort-watch|weak-memo)\\.ts$',
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
const JOBS = '^src/(bulk|postgres|bullmq)/';
const ADAPTERS = '^src/(http|cli|console|doctor)/';
/** The HTTP handler and its routes: everything in src/http but the Node listener (node.ts, light.ts). */
const HANDLER = { path: '^src/http/', pathNot: '^src/http/(node|light)\\.ts$' };

/**
 * Today's violations: [rule, from, to, why]. For a circle, `to` is the list of its modules. Remove an entry
 * when its file is fixed (dependency-cruiser then reports nothing for it; an entry that matches nothing is
 * harmless but should go).
 */
const EXCEPTIONS = [
  // --- src/smtp/pool/types.ts and src/smtp/session/options.ts (smtp-house, being split): they import TlsPolicy
  // from src/options.ts, which closes circles options -> checks/types -> runtime -> smtp/prober -> pool/session ->
  // options. TlsPolicy now lives in src/smtp/types.ts: importing it from there removes all of these.
  ...[
    ['runtime', 'smtp/prober', 'smtp/pool', 'smtp/pool/backoff', 'smtp/pool/types'],
    ['smtp/pool', 'smtp/pool/connection', 'smtp/pool/types', 'runtime', 'smtp/prober'],
    ['smtp/pool', 'smtp/pool/lease', 'smtp/pool/types', 'runtime', 'smtp/prober'],
    ['smtp/pool', 'smtp/pool/resource', 'smtp/pool/backoff', 'smtp/pool/types', 'runtime', 'smtp/prober'],
    ['smtp/pool', 'smtp/pool/slots', 'smtp/pool/connection', 'smtp/pool/types', 'runtime', 'smtp/prober'],
    ['smtp/pool', 'smtp/pool/types', 'runtime', 'smtp/prober'],
    [
      'smtp/pool/envelope',
      'smtp/pool/connection',
      'smtp/pool/types',
      'runtime',
      'smtp/prober',
      'smtp/pool',
      'smtp/pool/resource',
    ],
    [
      'smtp/pool/envelope',
      'smtp/pool/lease',
      'smtp/pool/types',
      'runtime',
      'smtp/prober',
      'smtp/pool',
      'smtp/pool/resource',
    ],
    ['smtp/pool/envelope', 'smtp/pool/types', 'runtime', 'smtp/prober', 'smtp/pool', 'smtp/pool/resource'],
    ['smtp/pool/group', 'smtp/pool/types', 'runtime', 'smtp/prober', 'smtp/pool', 'smtp/pool/resource'],
    ['smtp/pool/resource', 'smtp/pool/connection', 'smtp/pool/types', 'runtime', 'smtp/prober', 'smtp/pool'],
    ['smtp/pool/resource', 'smtp/pool/lease', 'smtp/pool/types', 'runtime', 'smtp/prober', 'smtp/pool'],
    [
      'smtp/pool/resource',
      'smtp/pool/slots',
      'smtp/pool/connection',
      'smtp/pool/types',
      'runtime',
      'smtp/prober',
      'smtp/pool',
    ],
    ['smtp/pool/resource', 'smtp/pool/types', 'runtime', 'smtp/prober', 'smtp/pool'],
    ['smtp/pool/slots', 'smtp/pool/types', 'runtime', 'smtp/prober', 'smtp/pool'],
    ['smtp/prober', 'smtp/session', 'smtp/session/core', 'smtp/session/options', 'runtime'],
    [
      'smtp/session',
      'smtp/session/group',
      'smtp/session/core',
      'smtp/session/options',
      'runtime',
      'smtp/prober',
    ],
    [
      'smtp/session',
      'smtp/session/hello',
      'smtp/session/core',
      'smtp/session/options',
      'runtime',
      'smtp/prober',
    ],
    ['smtp/session', 'smtp/session/options', 'runtime', 'smtp/prober'],
    [
      'smtp/session/group',
      'smtp/session/hello',
      'smtp/session/core',
      'smtp/session/options',
      'runtime',
      'smtp/prober',
      'smtp/session',
    ],
    ['smtp/session/hello', 'smtp/session/options', 'runtime', 'smtp/prober', 'smtp/session'],
  ].map((modules) => [
    'no-circular',
    null,
    [...modules, 'options', 'checks/types'],
    'smtp-house: pool/types.ts and session/options.ts import TlsPolicy from src/options.ts',
  ]),
  // --- The core's own type circle (test-infra follow-up): a Check sees the ResolvedOptions, and the options
  // name the Check type (options.checks) and the runtime the verifier builds from them.
  [
    'no-circular',
    null,
    ['checks/types', 'options'],
    'options.checks names Check; Check sees ResolvedOptions',
  ],
  [
    'no-circular',
    null,
    ['checks/types', 'runtime', 'options'],
    'CheckState.runtime is built from ResolvedOptions',
  ],
  // --- The core calls the seams through interfaces that live in the seam folders (STYLE's house shape puts
  // the Resolver and Transport interfaces in dns/ and smtp/). Follow-up: move what the core uses of them
  // (types, the address guard, reply classification) into the core; the pool is reached through the runtime.
  ['core-below-seams', 'checks/mx', 'dns/guard', 'the MX check guards the addresses it resolved'],
  ['core-below-seams', 'checks/mx', 'dns/name', 'the MX check looks up names'],
  ['core-below-seams', 'checks/mx', 'dns/types', 'the Resolver interface'],
  ['core-below-seams', 'checks/smtp', 'smtp/classify', 'the SMTP check classifies replies'],
  ['core-below-seams', 'checks/smtp', 'smtp/pool', 'the SMTP check leases pooled sessions'],
  ['core-below-seams', 'checks/smtp', 'smtp/provider', 'the SMTP check names the provider'],
  [
    'core-below-seams',
    'checks/smtp',
    'smtp/providers/profiles',
    "the SMTP check applies the provider's profile",
  ],
  ['core-below-seams', 'checks/smtp', 'smtp/reply', 'the SMTP check prints replies'],
  ['core-below-seams', 'checks/smtp', 'smtp/types', 'the Transport and reply types'],
  ['core-below-seams', 'runtime', 'dns/types', 'the runtime holds the resolver'],
  ['core-below-seams', 'runtime', 'smtp/prober', 'the runtime makes the SMTP pools'],
  ['core-below-seams', 'runtime', 'smtp/types', 'the runtime holds the transport'],
  ['core-below-seams', 'errors', 'smtp/types', 'SmtpError carries the reply as evidence'],
  ['core-below-seams', 'options', 'dns/guard', 'allowAddresses is parsed by the guard'],
  ['core-below-seams', 'options', 'dns/types', 'the resolver option'],
  ['core-below-seams', 'options', 'smtp/types', 'the transport and tls options'],
  // --- An adapter that composes another: `mailvet serve` starts the HTTP adapter (src/cli/serve.ts,
  // store-safety), `mailvet doctor` and GET /v1/diagnostics run the doctor. Follow-up: the doctor's diagnose()
  // is a library both expose; it belongs below the adapters.
  ['adapter-to-adapter', 'cli/serve', 'http/node', 'store-safety: mailvet serve starts the HTTP listener'],
  ['adapter-to-adapter', 'cli/serve', 'http/auth', 'store-safety: mailvet serve checks API keys'],
  ['adapter-to-adapter', 'cli/serve', 'http/request-log', 'logs: mailvet serve logs the requests it serves'],
  ['adapter-to-adapter', 'cli/serve', 'doctor/options', 'store-safety: serve passes diagnostics options'],
  ['adapter-to-adapter', 'cli/doctor', 'doctor/diagnose', 'mailvet doctor runs diagnose()'],
  ['adapter-to-adapter', 'cli/doctor', 'doctor/options', 'mailvet doctor runs diagnose()'],
  ['adapter-to-adapter', 'cli/doctor', 'doctor/types', 'mailvet doctor runs diagnose()'],
  ['adapter-to-adapter', 'cli/doctor-render', 'doctor/types', 'mailvet doctor prints the report'],
  ['adapter-to-adapter', 'cli/io', 'doctor/options', 'the CLI io names the diagnose seam'],
  ['adapter-to-adapter', 'cli/io', 'doctor/types', 'the CLI io names the diagnose seam'],
  ['adapter-to-adapter', 'http/context', 'doctor/types', 'GET /v1/diagnostics'],
  ['adapter-to-adapter', 'http/diagnostics-route', 'doctor/diagnose', 'GET /v1/diagnostics'],
  ['adapter-to-adapter', 'http/diagnostics-route', 'doctor/options', 'GET /v1/diagnostics'],
  ['adapter-to-adapter', 'http/diagnostics-route', 'doctor/types', 'GET /v1/diagnostics'],
  ['adapter-to-adapter', 'http/diagnostics-schema', 'doctor/types', 'GET /v1/diagnostics'],
  // --- The handler reads the built console from disk and V8's heap size for a default limit (test-infra
  // follow-up: the Node listener reads them and hands the handler values).
  ['handler-runtime-free', 'http/console', 'fs', 'readConsole() reads dist/console'],
  ['handler-runtime-free', 'http/console', 'url', 'the default console directory'],
  ['handler-runtime-free', 'http/limits', 'v8', 'defaultMaxAddressesPerKey() reads the heap limit'],
];

/** Node built-ins keep their name; a module is named without src/ and .ts above. */
const file = (name) => (['fs', 'url', 'v8'].includes(name) ? name : `src/${name}.ts`);

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
      comment: 'The job layer imports no adapter.',
      severity: 'error',
      from: { path: JOBS },
      to: { path: ADAPTERS },
    },
    {
      name: 'adapter-to-adapter',
      comment: 'An adapter never imports another adapter; what two adapters share lives in src/io.',
      severity: 'error',
      from: { path: '^src/(http|cli|console|doctor)/' },
      to: { path: ADAPTERS, pathNot: '^src/$1/' },
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
