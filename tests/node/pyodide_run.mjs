// Run presets in Pyodide under Node, from node_modules (no network), and print JSON results.
// usage: node tests/node/pyodide_run.mjs ARCHIVE.zip JOBS.json [SNAPSHOT.bin.gz]
// With SNAPSHOT (sitebuild/snapshot.mjs's, made from ARCHIVE), Python starts from it as the site's worker does.
// JOBS: [{"preset": "...", "seed": 7|null, "duration": 30.0|null}, ...]
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import { growAtInstantiation } from "../../web/static/js/wasm-start.js";

const require = createRequire(import.meta.url);
const indexURL = dirname(require.resolve("pyodide/package.json")) + "/";
const [archive, jobsPath, snapshot] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));

const t0 = performance.now();
const options = { indexURL, stdout: () => {}, stderr: (s) => process.stderr.write(s + "\n") };
if (snapshot) {
  options._loadSnapshot = gunzipSync(readFileSync(snapshot));
  growAtInstantiation(options._loadSnapshot.length); // as the worker does: the snapshot outgrew the wasm's memory
}
const pyodide = await loadPyodide(options);
pyodide.unpackArchive(new Uint8Array(readFileSync(archive)), "zip", { extractDir: "/app" });
if (!snapshot) pyodide.runPython("import sys; sys.path.insert(0, '/app')");
const load_ms = performance.now() - t0;

const runOne = pyodide.runPython(`
import json, sys
from sims.core import api
def run_one(job):
    job = json.loads(job)
    return json.dumps(api.run(job["preset"], job.get("seed"), job.get("duration"), job.get("panels")))
run_one
`);
const results = [];
for (const job of jobs) {
  const s = performance.now();
  try {
    results.push({ ok: true, result: JSON.parse(runOne(JSON.stringify(job))), wall_ms: performance.now() - s });
  } catch (e) {
    results.push({ ok: false, error: String(e).slice(-2000) });
  }
}
process.stdout.write(JSON.stringify({ python: pyodide.runPython("import sys; sys.version"), load_ms, results }));
