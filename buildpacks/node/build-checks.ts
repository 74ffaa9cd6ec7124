/**
 * Small steps the Node.js plan runs with the installed Node.js itself (`node -e`),
 * so that they are commands in the plan rather than runplan code. The scripts
 * keep to what Node.js 0.8 understands: an application may ask for it.
 */

/** The candidates `node <main>` would load, in Node's own order for a main entry. */
export function mainCandidates(main: string): string[] {
  return [main, `${main}.js`, `${main}.json`, `${main}.node`, `${main}/index.js`];
}

/** Exits 0 and names the file when one of mainCandidates(argv[1]) is a file; exits 1 otherwise. */
export const VERIFY_MAIN_SCRIPT = [
  'var fs = require("fs"), m = process.argv[1];',
  'var c = [m, m + ".js", m + ".json", m + ".node", m + "/index.js"];',
  'for (var i = 0; i < c.length; i++) { try { if (fs.statSync(c[i]).isFile()) { console.log("main resolves to " + c[i]); process.exit(0); } } catch (e) {} }',
  'console.error("none of " + c.join(", ") + " exists"); process.exit(1);',
].join('\n');

/**
 * Removes devDependencies from the build's copy of package.json (the
 * application's own files are untouched): Yarn 2 has no production install.
 */
export const OMIT_DEV_DEPENDENCIES_SCRIPT = [
  'var fs = require("fs"), p = JSON.parse(fs.readFileSync("package.json", "utf8"));',
  'var names = Object.keys(p.devDependencies || {}); delete p.devDependencies;',
  'fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\\n");',
  'console.log("left out of this build\'s package.json: " + (names.join(", ") || "(no devDependencies)"));',
].join('\n');
