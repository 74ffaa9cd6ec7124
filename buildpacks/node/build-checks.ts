/**
 * Small steps the Node.js plan runs with the installed Node.js itself (`node -e`),
 * so that they are commands in the plan rather than runplan code. The scripts
 * keep to what Node.js 0.8 understands: an application may ask for it.
 */

/** The candidates `node <main>` would load, in Node's own order for a main entry. */
export function mainCandidates(main: string): string[] {
  return [main, `${main}.js`, `${main}.json`, `${main}.node`, `${main}/index.js`];
}

/** What VERIFY_MAIN_SCRIPT prints when main is a link leading outside the application (matched by an onFailure rule). */
// Printed from two halves by VERIFY_MAIN_SCRIPT: an image build echoes the script, which must not match the rule.
export const MAIN_OUTSIDE_MARK = 'leads outside the application';

/**
 * Exits 0 and names the file when one of mainCandidates(argv[1]) is a file
 * inside the build directory once links are followed; exits 2 when the file is
 * reached through a link leading outside (node would run a file of the host);
 * exits 1 when none exists.
 */
export const VERIFY_MAIN_SCRIPT = [
  'var fs = require("fs"), path = require("path"), m = process.argv[1], root = fs.realpathSync(".");',
  'var c = [m, m + ".js", m + ".json", m + ".node", m + "/index.js"];',
  'for (var i = 0; i < c.length; i++) { var real; try { if (!fs.statSync(c[i]).isFile()) continue; real = fs.realpathSync(c[i]); } catch (e) { continue; }',
  `  if (real.indexOf(root + path.sep) !== 0) { console.error("main resolves to " + JSON.stringify(c[i]) + ", which ${MAIN_OUTSIDE_MARK.slice(0, 6)}" + "${MAIN_OUTSIDE_MARK.slice(6)}"); process.exit(2); }`,
  '  console.log("main resolves to " + c[i]); process.exit(0); }',
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
