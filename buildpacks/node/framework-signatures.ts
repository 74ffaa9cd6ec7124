/**
 * Frameworks runplan recognises, as data: the dependency that reveals each one,
 * the command its `build` script usually holds, the folder that build writes,
 * and how its production server starts. Which dependency reveals a framework,
 * its build command and its output folder follow the lists other detectors
 * publish (Vercel's `@vercel/frameworks`, Netlify's `@netlify/build-info`); the
 * start commands are each framework's documented production server, written as
 * a package.json script runs them (the dependencies' commands on PATH).
 *
 * The first entry that matches wins, so a framework built on Vite comes before
 * Vite itself, and a variant needing a file or a dependency before the plain one.
 * Adding a framework is adding an entry: frameworks.ts holds no per-framework code.
 */

/** A Node.js server the build writes. */
interface ServerSignature {
  /** The production start command, as a package.json script writes it. */
  readonly start: string;
  /** Adapters that make the build write that server (any of them); absent: the framework always does. */
  readonly adapters?: readonly string[];
  /** What to add when no adapter is there, for a fix ("add @sveltejs/adapter-node and make it the adapter"). */
  readonly adapterAdvice?: string;
}

export interface FrameworkSignature {
  readonly id: string;
  readonly name: string;
  /** Any of these in dependencies or devDependencies reveals the framework. */
  readonly dependencies: readonly string[];
  /** The entry applies only when one of these files exists too (a variant told apart by its layout). */
  readonly files?: readonly string[];
  /** The entry applies only when one of these dependencies is there too. */
  readonly with?: readonly string[];
  /** The command its build script runs. */
  readonly build: string;
  /** The folder the build writes, from the application root. */
  readonly output: string;
  /** How it serves in production when it writes a server. */
  readonly server?: ServerSignature;
  /** Without a server (none, or no adapter), the build is static files: `spa` serves index.html for unknown paths. */
  readonly static?: { readonly spa: boolean };
}

export const FRAMEWORKS: readonly FrameworkSignature[] = [
  {
    id: 'nuxt',
    name: 'Nuxt',
    dependencies: ['nuxt', 'nuxt3', 'nuxt-edge'],
    build: 'nuxt build',
    output: '.output',
    // Nitro's node-server output (Nuxt 3 and later).
    server: { start: 'node .output/server/index.mjs' },
  },
  { id: 'nextjs', name: 'Next.js', dependencies: ['next'], build: 'next build', output: '.next', server: { start: 'next start' } },
  {
    id: 'remix-classic',
    name: 'Remix (classic compiler)',
    dependencies: ['@remix-run/dev'],
    files: ['remix.config.js', 'remix.config.mjs'],
    build: 'remix build',
    output: 'build',
    server: { start: 'remix-serve ./build/index.js', adapters: ['@remix-run/serve'], adapterAdvice: 'add @remix-run/serve to dependencies' },
  },
  {
    id: 'remix',
    name: 'Remix',
    dependencies: ['@remix-run/dev'],
    build: 'remix vite:build',
    output: 'build',
    server: { start: 'remix-serve ./build/server/index.js', adapters: ['@remix-run/serve'], adapterAdvice: 'add @remix-run/serve to dependencies' },
  },
  {
    id: 'react-router',
    name: 'React Router (framework mode)',
    dependencies: ['@react-router/dev'],
    build: 'react-router build',
    output: 'build',
    server: { start: 'react-router-serve ./build/server/index.js', adapters: ['@react-router/serve'], adapterAdvice: 'add @react-router/serve to dependencies' },
  },
  {
    id: 'sveltekit',
    name: 'SvelteKit',
    dependencies: ['@sveltejs/kit'],
    build: 'vite build',
    output: 'build',
    server: {
      start: 'node build',
      adapters: ['@sveltejs/adapter-node'],
      adapterAdvice: 'add @sveltejs/adapter-node and make it the adapter (svelte.config.js; from SvelteKit 3, the options of the sveltekit() plugin in vite.config)',
    },
  },
  {
    id: 'astro',
    name: 'Astro',
    dependencies: ['astro'],
    build: 'astro build',
    output: 'dist',
    // The standalone server listens on localhost unless HOST says otherwise.
    server: { start: 'HOST=0.0.0.0 node ./dist/server/entry.mjs', adapters: ['@astrojs/node'] },
    static: { spa: false },
  },
  {
    id: 'tanstack-start',
    name: 'TanStack Start',
    dependencies: ['@tanstack/react-start', '@tanstack/solid-start', '@tanstack/start'],
    build: 'vite build',
    output: '.output',
    server: {
      start: 'node .output/server/index.mjs',
      adapters: ['nitro', 'nitropack', 'vinxi'],
      adapterAdvice: 'add nitro and its Vite plugin to vite.config, which writes the Node server to .output',
    },
  },
  { id: 'solidstart', name: 'SolidStart', dependencies: ['@solidjs/start', 'solid-start'], build: 'vinxi build', output: '.output', server: { start: 'node .output/server/index.mjs' } },
  { id: 'analog', name: 'Analog', dependencies: ['@analogjs/platform'], build: 'vite build', output: 'dist/analog', server: { start: 'node dist/analog/server/index.mjs' } },
  { id: 'nestjs', name: 'NestJS', dependencies: ['@nestjs/core'], build: 'nest build', output: 'dist', server: { start: 'node dist/main' } },
  { id: 'gatsby', name: 'Gatsby', dependencies: ['gatsby'], build: 'gatsby build', output: 'public', static: { spa: false } },
  { id: 'docusaurus', name: 'Docusaurus', dependencies: ['@docusaurus/core'], build: 'docusaurus build', output: 'build', static: { spa: false } },
  { id: 'eleventy', name: 'Eleventy', dependencies: ['@11ty/eleventy'], build: 'eleventy', output: '_site', static: { spa: false } },
  { id: 'create-react-app', name: 'Create React App', dependencies: ['react-scripts'], build: 'react-scripts build', output: 'build', static: { spa: true } },
  { id: 'vue-cli', name: 'Vue CLI', dependencies: ['@vue/cli-service'], build: 'vue-cli-service build', output: 'dist', static: { spa: true } },
  {
    // create-vite-extra's SSR templates: an Express server.js that renders with Vite's output.
    id: 'vite-ssr',
    name: 'Vite (server-side rendering)',
    dependencies: ['vite'],
    files: ['server.js', 'server.mjs'],
    with: ['express'],
    build: 'vite build',
    output: 'dist',
    server: { start: 'NODE_ENV=production node server' },
  },
  { id: 'vite', name: 'Vite', dependencies: ['vite'], build: 'vite build', output: 'dist', static: { spa: true } },
];

/**
 * How a static build is served when the framework writes no server: `serve`, the
 * static file server most used on the npm registry, on the port the service gives.
 */
export const STATIC_SERVER = { package: 'serve', start: (dir: string, spa: boolean) => `serve ${spa ? '-s ' : ''}${dir} -l $PORT` } as const;
