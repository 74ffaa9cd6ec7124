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

/** What NATIVE_MODULES_SCRIPT prints before each optional dependency npm left out (matched by a warnOn rule). */
export const OPTIONAL_SKIPPED_MARK = 'optional dependency left out: ';

/** What NATIVE_MODULES_SCRIPT prints before the packages it found unbuilt (matched by an onFailure rule). */
export const NATIVE_UNBUILT_MARK = 'native modules not built: ';

/**
 * Exits 1 naming every installed package (under the folders given, nested
 * node_modules and pnpm's store included) that builds a native module — a
 * binding.gyp compiled by its install script (node-gyp, prebuild-install,
 * node-pre-gyp, cmake-js) or by npm's implicit `node-gyp rebuild` — yet holds
 * neither a compiled `.node` file nor the `build` folder any of them leaves: its
 * install script never ran (npm 12 allowScripts, pnpm 10, bun's
 * trustedDependencies, ignore-scripts), and the application would fail at its
 * first require. A script that ran and built nothing on this system (a
 * binding.gyp without targets for Linux, a tolerated failure) is the package's
 * choice; scripts that build nothing of their own (a prebuilt binary in another
 * package) are not judged.
 */
export const NATIVE_MODULES_SCRIPT = [
  'var fs = require("fs"), path = require("path"), seen = {}, missing = [], visited = 0, NATIVE = /node-gyp|prebuild-install|node-pre-gyp|cmake-js/;',
  'function json(f) { try { return JSON.parse(fs.readFileSync(f, "utf8")); } catch (e) { return null; } }',
  'function list(d) { try { return fs.readdirSync(d); } catch (e) { return []; } }',
  'function isDir(p) { try { return fs.statSync(p).isDirectory(); } catch (e) { return false; } }',
  'function hasBinary(d, depth) { var names = list(d); for (var i = 0; i < names.length; i++) { var p = path.join(d, names[i]);',
  '  if (/\\.node$/.test(names[i])) return true;',
  '  if (names[i] !== "node_modules" && depth < 8 && isDir(p) && !fs.lstatSync(p).isSymbolicLink() && hasBinary(p, depth + 1)) return true; } return false; }',
  'function check(dir) { var real; try { real = fs.realpathSync(dir); } catch (e) { return; } if (seen[real] || ++visited > 200000) return; seen[real] = true;',
  '  var p = json(path.join(dir, "package.json")); if (p && typeof p === "object") { var s = p.scripts || {};',
  '    var gyp = p.gypfile !== false && fs.existsSync(path.join(dir, "binding.gyp"));',
  '    var implicit = gyp && !s.install && !s.preinstall;',
  '    if (gyp && (implicit || NATIVE.test([s.preinstall, s.install, s.postinstall].join(" "))) && !hasBinary(dir, 0) && !isDir(path.join(dir, "build"))) missing.push(String(p.name) + "@" + String(p.version)); }',
  '  scan(path.join(dir, "node_modules")); }',
  'function scan(d) { var names = list(d); for (var i = 0; i < names.length; i++) { var n = names[i], p = path.join(d, n);',
  '  if (n === ".bin") continue;',
  '  if (n === ".pnpm") { var store = list(p); for (var j = 0; j < store.length; j++) scan(path.join(p, store[j], "node_modules")); continue; }',
  '  if (n.charAt(0) === "@") { var scoped = list(p); for (var k = 0; k < scoped.length; k++) check(path.join(p, scoped[k])); continue; }',
  '  if (isDir(p)) check(p); } }',
  'for (var a = 1; a < process.argv.length; a++) scan(process.argv[a]);',
  // npm drops an optional dependency whose install failed without a word: those package-lock.json
  // names for this system (os, cpu, libc) that are not in node_modules.
  'function fits(list, value) { if (!(list instanceof Array) || list.length === 0) return true; var allowed = false, listed = false;',
  '  for (var i = 0; i < list.length; i++) { var x = String(list[i]); if (x.charAt(0) === "!") { if (x.slice(1) === value) return false; } else { listed = true; if (x === value) allowed = true; } } return allowed || !listed; }',
  'var lock = json("package-lock.json"), skipped = 0;',
  'if (lock && lock.packages && typeof lock.packages === "object") for (var key in lock.packages) { var e = lock.packages[key];',
  '  if (!e || e.optional !== true || key.indexOf("node_modules/") !== 0 || !fits(e.os, process.platform) || !fits(e.cpu, process.arch) || !fits(e.libc, "glibc") || fs.existsSync(key)) continue;',
  `  if (++skipped <= 50) console.log("${OPTIONAL_SKIPPED_MARK.slice(0, 9)}" + "${OPTIONAL_SKIPPED_MARK.slice(9)}" + key.replace(/^.*node_modules\\//, "") + "@" + String(e.version)); }`,
  // Printed from two halves: an image build echoes the script, which must not match the rule.
  `if (missing.length > 0) { console.error("${NATIVE_UNBUILT_MARK.slice(0, 7)}" + "${NATIVE_UNBUILT_MARK.slice(7)}" + missing.sort().join(", ")); process.exit(1); }`,
  'console.log(visited + " installed packages checked: every native module is built");',
].join('\n');
