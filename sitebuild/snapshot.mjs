// Make Pyodide's memory snapshot for the site (sitebuild/snapshot.py runs this at build time).
// usage: node sitebuild/snapshot.mjs PYODIDE_DIR SIMS_ZIP OUT.gz
// PYODIDE_DIR is the site's own copy (static/vendor/pyodide/), so the snapshot is made by the very
// build the worker loads (Pyodide refuses a snapshot from another build: "Snapshot build id mismatch").
// The interpreter is taken as the worker leaves it before any request: sims.zip unpacked in /app,
// /app on sys.path, web.pyodide.bridge imported, no scenario created, no JS object held by Python;
// and every topic imported too (web/pyodide/warm.py), which grows the memory past the wasm's initial
// 30 MiB: the worker grows a new instance's memory to the snapshot's size first (wasm-start.js).
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const [pyodideDir, simsZip, out] = process.argv.slice(2);
const indexURL = resolve(pyodideDir) + "/"; // a path: under Node, Pyodide reads its files from disk
try {
  const { loadPyodide } = await import(pathToFileURL(indexURL + "pyodide.mjs").href);
  const pyodide = await loadPyodide({ indexURL, _makeSnapshot: true, stdout: () => {}, stderr: (s) => console.warn(s) });
  pyodide.unpackArchive(new Uint8Array(readFileSync(simsZip)), "zip", { extractDir: "/app" });
  pyodide.runPython("import sys; sys.path.insert(0, '/app')");
  pyodide.pyimport("web.pyodide.bridge").destroy();
  pyodide.runPython("from web.pyodide.warm import warm; warm()");
  pyodide.runPython("import gc; gc.collect()");
  const snapshot = pyodide.makeMemorySnapshot();
  writeFileSync(out, gzipSync(snapshot, { level: 6 }));
} catch (err) {
  // one line for the build to print (sitebuild/snapshot.py)
  process.stderr.write(`${String(err && err.message ? err.message : err).split("\n")[0]}\n`);
  process.exit(1);
}
