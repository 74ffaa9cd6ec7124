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

/** What NATIVE_MODULES_SCRIPT prints before the packages whose loader finds a prebuilt binary for this system. */
export const PREBUILT_MARK = 'native modules loaded from prebuilt binaries, nothing to build: ';

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
 *
 * A package whose install script is node-gyp-build or
 * node-gyp-build-optional-packages (lmdb, msgpackr-extract, bufferutil…) is
 * judged as its loader judges at require time: built (`build/`), or a prebuilt
 * binary for this platform, architecture, libc and ABI in its `prebuilds/` or
 * in the package `@<name>/<name>-<platform>-<arch>` its optional dependencies
 * bring. Such a script only selects that binary and builds nothing when there
 * is one, so whether it ran says nothing; the packages satisfied so are named.
 *
 * It also names the optional dependencies npm left out although it should have
 * installed them (an install that failed, which npm drops without a word):
 * those package-lock.json lists for this system (`os`, `cpu`, `libc`, each a
 * string or a list, as npm reads them) and that an installed package, or the
 * application itself, depends on. What only a package left out for another
 * system wants (fsevents' bindings, a wasm32 binding's runtime) npm rightly
 * leaves out too.
 */
export const NATIVE_MODULES_SCRIPT = [
  'var fs = require("fs"), path = require("path"), seen = {}, missing = [], prebuilt = [], visited = 0, NATIVE = /node-gyp|prebuild-install|node-pre-gyp|cmake-js/;',
  'var SELECTOR = /^\\s*node-gyp-build(-optional-packages)?(-optional)?\\s*$/, ABI = process.versions.modules, LIBC = "glibc";',
  // Node.js reports the glibc it runs on; none (musl) or an old Node.js without the report: Debian's stacks are glibc.
  'try { var report = process.report && process.report.getReport(); if (report && report.header && !report.header.glibcVersionRuntime) LIBC = "musl"; } catch (e) {}',
  'function json(f) { try { return JSON.parse(fs.readFileSync(f, "utf8")); } catch (e) { return null; } }',
  'function list(d) { try { return fs.readdirSync(d); } catch (e) { return []; } }',
  'function isDir(p) { try { return fs.statSync(p).isDirectory(); } catch (e) { return false; } }',
  'function hasBinary(d, depth) { var names = list(d); for (var i = 0; i < names.length; i++) { var p = path.join(d, names[i]);',
  '  if (/\\.node$/.test(names[i])) return true;',
  '  if (names[i] !== "node_modules" && depth < 8 && isDir(p) && !fs.lstatSync(p).isSymbolicLink() && hasBinary(p, depth + 1)) return true; } return false; }',
  // node-gyp-build's tags: node.napi.glibc.node, node.abi127.node…: this runtime (node), its ABI or N-API, and this libc when tagged.
  'function fitting(d) { var names = list(d); for (var i = 0; i < names.length; i++) { var tags = names[i].split("."); if (tags.pop() !== "node") continue;',
  '  var t = { runtime: null, napi: false, abi: null, libc: null }; for (var j = 0; j < tags.length; j++) { var x = tags[j];',
  '    if (x === "node" || x === "electron" || x === "node-webkit") t.runtime = x; else if (x === "napi") t.napi = true; else if (x.slice(0, 3) === "abi") t.abi = x.slice(3); else if (x === "glibc" || x === "musl") t.libc = x; }',
  '  if (t.runtime === "node" && (t.napi || t.abi === ABI) && (t.libc === null || t.libc === LIBC)) return names[i]; } return null; }',
  'function prebuiltOf(real, name) { var tuples = list(path.join(real, "prebuilds"));',
  '  for (var i = 0; i < tuples.length; i++) { var pa = tuples[i].split("-"); if (pa.length !== 2 || pa[0] !== process.platform || ("+" + pa[1] + "+").indexOf("+" + process.arch + "+") < 0) continue;',
  '    var f = fitting(path.join(real, "prebuilds", tuples[i])); if (f) return "prebuilds/" + tuples[i] + "/" + f; }',
  '  var pkg = (name.charAt(0) === "@" ? "" : "@" + name + "/") + name + "-" + process.platform + "-" + process.arch;',
  '  for (var d = real; ; d = path.dirname(d)) { if (path.basename(d) !== "node_modules") { var g = fitting(path.join(d, "node_modules", pkg)); if (g) return pkg + "/" + g; } if (path.dirname(d) === d) return null; } }',
  'function check(dir) { var real; try { real = fs.realpathSync(dir); } catch (e) { return; } if (seen[real] || ++visited > 200000) return; seen[real] = true;',
  '  var p = json(path.join(dir, "package.json")); if (p && typeof p === "object") { var s = p.scripts || {}, id = String(p.name) + "@" + String(p.version);',
  '    var gyp = p.gypfile !== false && fs.existsSync(path.join(dir, "binding.gyp"));',
  '    var implicit = gyp && !s.install && !s.preinstall;',
  '    var selector = SELECTOR.test(s.install || "") || SELECTOR.test(s.preinstall || "") || SELECTOR.test(s.postinstall || "");',
  '    var binary = gyp && selector && !isDir(path.join(dir, "build")) ? prebuiltOf(real, String(p.name)) : null;',
  '    if (binary) prebuilt.push(id + " (" + binary + ")");',
  '    else if (gyp && (implicit || NATIVE.test([s.preinstall, s.install, s.postinstall].join(" "))) && (selector || !hasBinary(dir, 0)) && !isDir(path.join(dir, "build"))) missing.push(id); }',
  '  scan(path.join(dir, "node_modules")); }',
  'function scan(d) { var names = list(d); for (var i = 0; i < names.length; i++) { var n = names[i], p = path.join(d, n);',
  '  if (n === ".bin") continue;',
  '  if (n === ".pnpm") { var store = list(p); for (var j = 0; j < store.length; j++) scan(path.join(p, store[j], "node_modules")); continue; }',
  '  if (n.charAt(0) === "@") { var scoped = list(p); for (var k = 0; k < scoped.length; k++) check(path.join(p, scoped[k])); continue; }',
  '  if (isDir(p)) check(p); } }',
  'for (var a = 1; a < process.argv.length; a++) scan(process.argv[a]);',
  `if (prebuilt.length > 0) console.log("${PREBUILT_MARK.slice(0, 7)}" + "${PREBUILT_MARK.slice(7)}" + prebuilt.sort().join(", "));`,
  // npm-install-checks: a string is a list of one; "!x" excludes x; any allowed value listed means only those.
  'function fits(list, value) { if (typeof list === "string") list = [list]; if (!(list instanceof Array) || list.length === 0) return true; var allowed = false, listed = false;',
  '  for (var i = 0; i < list.length; i++) { var x = String(list[i]); if (x.charAt(0) === "!") { if (x.slice(1) === value) return false; } else { listed = true; if (x === value) allowed = true; } } return allowed || !listed; }',
  'function forHere(e) { return fits(e.os, process.platform) && fits(e.cpu, process.arch) && fits(e.libc, LIBC); }',
  'var lock = json("package-lock.json"), all = lock && lock.packages && typeof lock.packages === "object" ? lock.packages : {}, left = {}, skipped = [];',
  // The development dependencies were installed when one that is not optional is there (or there are none).
  'var devInstalled = true; for (var key in all) { var d = all[key]; if (d && d.dev === true && d.optional !== true && key.indexOf("node_modules/") === 0) { devInstalled = fs.existsSync(key); if (devInstalled) break; } }',
  // Node.js's resolution inside the lock file: the dependent's own node_modules, then each one above it.
  'function up(base) { var at = base.lastIndexOf("/node_modules/"); if (at >= 0) return base.slice(0, at); if (base.indexOf("node_modules/") === 0) return ""; var s = base.lastIndexOf("/"); return s < 0 ? "" : base.slice(0, s); }',
  'function resolve(from, name) { for (var base = from; ; base = up(base)) { var k = (base ? base + "/" : "") + "node_modules/" + name; if (all[k]) return k; if (!base) return null; } }',
  'for (var from in all) { var e = all[from]; if (!e || typeof e !== "object" || e.link || (from !== "" && !fs.existsSync(from)) || !forHere(e)) continue;',
  '  var wants = [e.dependencies, e.optionalDependencies, from.indexOf("node_modules/") === 0 || !devInstalled ? null : e.devDependencies];',
  '  for (var w = 0; w < wants.length; w++) for (var name in wants[w] || {}) { var to = resolve(from, name), t = to ? all[to] : null;',
  '    if (!t || t.link || left[to] || (t.optional !== true && t.devOptional !== true) || !forHere(t) || fs.existsSync(to)) continue;',
  '    left[to] = true; skipped.push(to.replace(/^.*node_modules\\//, "") + "@" + String(t.version)); } }',
  `skipped.sort(); for (var q = 0; q < skipped.length && q < 50; q++) console.log("${OPTIONAL_SKIPPED_MARK.slice(0, 9)}" + "${OPTIONAL_SKIPPED_MARK.slice(9)}" + skipped[q]);`,
  // Printed from two halves: an image build echoes the script, which must not match the rule.
  `if (missing.length > 0) { console.error("${NATIVE_UNBUILT_MARK.slice(0, 7)}" + "${NATIVE_UNBUILT_MARK.slice(7)}" + missing.sort().join(", ")); process.exit(1); }`,
  'console.log(visited + " installed packages checked: every native module is built");',
].join('\n');
