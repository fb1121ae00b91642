// The import rules of the house (docs/architecture.md "Boundaries"), checked by `npm run lint`
// as part of `npm test`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import circles make load order matter and hide which side owns what.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-assembly-from-below',
      severity: 'error',
      comment: 'src/app.ts and src/main.ts assemble the service from the module list; nothing they assemble imports them.',
      from: { path: '^src/(platform|modules|module\\.ts|context\\.ts|config\\.ts)' },
      to: { path: '^src/(app|main)\\.ts$' },
    },
    {
      name: 'platform-imports-no-module',
      severity: 'error',
      comment: 'src/platform holds mechanisms without business rules: modules plug into it, never the reverse.',
      from: { path: '^src/platform/' },
      to: { path: '^src/(modules|cli|webhooks-receiver)/' },
    },
    {
      name: 'modules-meet-through-services',
      severity: 'error',
      comment: 'A module uses another through its service.ts (calls), schema.ts (shared TypeBox types), tables.ts (read-only joins) or events.ts (the events it emits, for consumers); never its store or other internals.',
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/(service|schema|tables|events)\\.ts$'],
      },
    },
    {
      name: 'platform-stands-below-the-service',
      severity: 'error',
      comment: 'src/platform is the ground floor: the settings table (config.ts), the context and the module shape stand on it, not it on them.',
      from: { path: '^src/platform/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'shared-types-stand-below-the-modules',
      severity: 'error',
      comment: 'The settings (config.ts), the context and the module shape are what modules stand on: they import no module.',
      from: { path: '^src/(config|context|module)\\.ts$' },
      to: { path: '^src/(modules|cli)/' },
    },
    {
      name: 'the-service-does-not-import-its-command',
      severity: 'error',
      comment: 'The `atrium` command (src/cli) stands on the service; nothing of the service imports it.',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'db-drivers-behind-the-facade',
      severity: 'error',
      comment: 'The database drivers and Drizzle\'s driver bindings are used in src/platform/db alone (the engines, and statements.ts, the one file that reaches into Drizzle\'s internals); stores write the query builder or SQL read through platform/db/rows.ts.',
      from: { pathNot: '^src/platform/db/' },
      to: { path: ['^node_modules/(postgres|@electric-sql/pglite)/', '^node_modules/drizzle-orm/(pglite|postgres-js)/', '^src/platform/db/pglite-[^/]+\\.ts$'] },
    },
    {
      name: 'llm-proxy-does-not-know-billing',
      severity: 'error',
      comment: 'Billing consumes the LLM proxy\'s events and admits its calls through platform/limits/admission.ts: the dependency runs one way, billing → llm-proxy.',
      from: { path: '^src/modules/llm-proxy/' },
      to: { path: '^src/modules/billing/' },
    },
    {
      name: 'modules-do-not-import-the-oauth-server',
      severity: 'error',
      comment: 'Resource modules do not depend on the authorization server: it builds on them, not they on it.',
      from: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/oauth/' },
      to: { path: '^src/modules/oauth/' },
    },
    {
      name: 'cli-uses-services',
      severity: 'error',
      comment: 'The CLI works through the same services as the API, never a store.',
      from: { path: '^src/cli/' },
      // The CLI is itself a first-party OAuth client: its client id and scope are the server's to declare.
      to: { path: '^src/modules/', pathNot: ['^src/modules/[^/]+/service\\.ts$', '^src/modules/oauth/first-party\\.ts$'] },
    },
    {
      name: 'receiver-helper-stands-alone',
      severity: 'error',
      comment: 'The webhook receiver helper is shipped for other programs; it must not pull in the server.',
      from: { path: '^src/webhooks-receiver/' },
      to: { path: '^src/', pathNot: '^src/webhooks-receiver/' },
    },
    {
      name: 'api-client-stands-alone',
      severity: 'error',
      comment: 'The generated API client is shared by the console (a browser app) and the CLI: it speaks HTTP and imports nothing of the server.',
      from: { path: '^src/api-client/' },
      to: { path: '^src/', pathNot: '^src/api-client/' },
    },
    {
      name: 'console-talks-to-the-api-only',
      severity: 'error',
      comment: 'The console runs in the browser: of the server\'s tree it may use only the generated API client (its types come from /openapi.json).',
      from: { path: '^console/' },
      to: { path: '^(src|scripts|test|bench)/', pathNot: '^src/api-client/' },
    },
    {
      name: 'server-does-not-import-the-console',
      severity: 'error',
      comment: 'The server serves the built console as files; its code is not the server\'s.',
      from: { path: '^(src|scripts|bench)/' },
      to: { path: '^console/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
