/**
 * Import rules, checked by `npm run lint` (dependency-cruiser) and proven to bite by
 * test/foundation/import-rules.test.ts (a fixture tree that breaks each rule once).
 * Layers, bottom up: services/core → services/tenancy → feature folders → services/platform and
 * services/http → runtime/gateway/worker. Folder-level cycles: test/foundation/folder-cycles.test.ts.
 * Workflows (replayed in a sandbox) see only @temporalio/workflow, their contracts and types.
 */
const TYPE_ONLY = ['type-only'];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles, type-only ones included: each module reads top to bottom.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-is-the-ground-floor',
      comment: 'services/core imports nothing of this repository outside services/core.',
      severity: 'error',
      from: { path: '^services/core/' },
      to: { path: '^(services/(?!core/)|activities/|workflows/|test/|bench/|scripts/)' },
    },
    {
      name: 'tenancy-stands-on-core',
      comment: 'services/tenancy is the floor the features stand on (workspaces, sites, quotas, indexes): it imports only services/core.',
      severity: 'error',
      from: { path: '^services/tenancy/' },
      to: { path: '^(services/(?!(core|tenancy)/)|activities/|workflows/|test/|bench/|scripts/)' },
    },
    {
      name: 'features-never-import-the-platform',
      comment:
        "The platform's operations (services/platform: lifecycle, deletion, usage, operators) stand above the features; only the wiring and activities import them.",
      severity: 'error',
      from: { path: '^services/(?!platform/)[^/]+/' },
      to: { path: '^services/platform/' },
    },
    {
      name: 'features-never-import-http',
      comment: 'Handlers never touch HTTP: only the http/ folder and the process wiring may import it.',
      severity: 'error',
      from: { path: '^(services/(?!http/)[^/]+/|activities/|workflows/)' },
      to: { path: '^services/http/' },
    },
    {
      name: 'features-never-import-the-wiring',
      comment: 'Feature folders are wired by services/runtime.ts and features.ts; they never import them.',
      severity: 'error',
      from: { path: '^services/[^/]+/' },
      to: { path: '^services/(runtime|gateway|worker|worker-factory|features)\\.ts$' },
    },
    {
      name: 'worker-serves-no-http',
      comment:
        'The worker runs workflows and activities: its entry never reaches the HTTP app, the surfaces, GraphQL, MCP or the admin UI (docs/production.md, "What the worker loads"). Its probe and metrics listeners are plain node:http.',
      severity: 'error',
      from: { path: '^services/worker\\.ts$' },
      to: {
        path: [
          '^services/(runtime\\.ts$|admin-ui/|mcp/|http/(?!(probes|metrics-listener)\\.ts$))',
          '^node_modules/(mercurius|graphql|graphql-jit|@modelcontextprotocol|@fastify)/',
        ],
        reachable: true,
      },
    },
    {
      name: 'services-never-import-activities',
      comment: 'Activities sit above the services (they are built from them); only the worker wires them.',
      severity: 'error',
      from: { path: '^services/', pathNot: '^services/worker-factory\\.ts$' },
      to: { path: '^activities/', dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'workflows-are-deterministic',
      comment: 'Workflow code imports only @temporalio/workflow, other workflow modules and types.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        dependencyTypesNot: TYPE_ONLY,
        pathNot: ['^workflows/', '^node_modules/@temporalio/(workflow|common)/'],
      },
    },
    {
      name: 'workflow-contracts-are-pure',
      comment: 'A contract (name, id, types, signals, queries, error types) is shared across the bundle boundary.',
      severity: 'error',
      from: { path: '^workflows/contracts/' },
      to: { dependencyTypesNot: TYPE_ONLY, pathNot: ['^node_modules/@temporalio/workflow/'] },
    },
    {
      name: 'callers-use-workflow-contracts',
      comment: 'Services and activities know a workflow by its contract; the workflow itself only as a type.',
      severity: 'error',
      from: { path: '^(services|activities)/' },
      to: { path: '^workflows/(?!contracts/)', dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'production-never-imports-tests',
      severity: 'error',
      from: { path: '^(services|activities|workflows)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
