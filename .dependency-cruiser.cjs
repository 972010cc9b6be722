/** @type {import('dependency-cruiser').IConfiguration} */
const CORE =
  '^src/(syntax|typo|data|checks)/|^src/(verifier|options|result|result-json|score|errors|envelope-options|abort-watch|weak-memo)\\.ts$';
const SEAMS = '^src/(dns|smtp|webhooks)/';
const JOBS = '^src/(bulk|postgres|bullmq)/';
const ADAPTERS = '^src/(http|cli|console|doctor)/';
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    { name: 'core-runtime-free', severity: 'error', from: { path: CORE }, to: { dependencyTypes: ['core'] } },
    {
      name: 'bulk-runtime-free',
      severity: 'error',
      from: { path: '^src/bulk/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'handler-runtime-free',
      severity: 'error',
      from: { path: '^src/http/', pathNot: '^src/http/(node|light)\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-below-seams',
      severity: 'error',
      from: { path: CORE },
      to: { path: `${SEAMS}|${JOBS}|${ADAPTERS}` },
    },
    {
      name: 'seams-below-jobs',
      severity: 'error',
      from: { path: SEAMS },
      to: { path: `${JOBS}|${ADAPTERS}` },
    },
    { name: 'jobs-below-adapters', severity: 'error', from: { path: JOBS }, to: { path: ADAPTERS } },
    {
      name: 'adapter-to-adapter',
      severity: 'error',
      from: { path: '^src/(http|cli|console|doctor)/' },
      to: { path: ADAPTERS, pathNot: '^src/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
