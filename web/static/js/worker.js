// The simulation worker (a module worker): loads Pyodide once, unpacks our Python, then answers
// requests {id, op, args} with {id, ok, result | error, ms}. One worker serves every simulation on
// a page; requests are handled one at a time, in arrival order.
// Assets resolve relative to this file, so a blob-URL bootstrap from another origin works too.
// Named "contention-edited" (edited.js), the worker runs edited policies, and is the only one that
// does: once Pyodide is up it drops every way out of its global scope (`lockdown`).
import { readZip, writeFiles } from "./unzip.js";
import { compileEarly, growAtInstantiation } from "./wasm-start.js";

const BASE = new URL("../", import.meta.url); // .../static/
const EDITED = self.name === "contention-edited";
const RUNS_EDITED_CODE = new Set(["editor_check", "edited_create", "edited_apply", "edited_inject"]); // web/pyodide/ops_editor.py
// what could reach a server, another worker or this origin's storage: the page's CSP already keeps
// them to this origin (connect-src 'self', worker-src blob:); the edited worker needs none of them
const WAYS_OUT = [
  "fetch",
  "XMLHttpRequest",
  "WebSocket",
  "WebSocketStream",
  "WebTransport",
  "EventSource",
  "Worker",
  "SharedWorker",
  "BroadcastChannel",
  "indexedDB",
  "caches",
  "cookieStore",
  "importScripts",
];

/** Remove WAYS_OUT from the global scope and its prototypes (what cannot go stays under the CSP). */
function lockdown() {
  for (let o = self; o; o = Object.getPrototypeOf(o)) for (const name of WAYS_OUT) Reflect.deleteProperty(o, name);
  const nav = self.navigator && Object.getPrototypeOf(self.navigator);
  for (const name of ["storage", "locks", "serviceWorker"]) if (nav) Reflect.deleteProperty(nav, name);
}

let bridgeCall = null;
let queue = Promise.resolve();

/** The bytes at `path` (under static/), or a rejection naming it. */
async function fetchBytes(path) {
  const r = await fetch(new URL(path, BASE));
  if (!r.ok) throw new Error(`cannot fetch ${path}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/** Hex SHA-256 of `bytes`. */
async function sha256(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** py/snapshot.json (sitebuild/snapshot.py), or null when the site has none or it cannot be read. */
async function fetchManifest() {
  try {
    const r = await fetch(new URL("py/snapshot.json", BASE));
    return r.ok ? await r.json() : null;
  } catch {
    return null;
  }
}

/** The snapshot `manifest` names, inflated; rejects, saying why, when it was made from another sims.zip. */
async function snapshotBytes(manifest, zip) {
  const gz = fetchBytes(`py/${manifest.file}`);
  gz.catch(() => {}); // observed below, unless the zip's hash says not to
  if ((await sha256(await zip)) !== manifest.sims_sha256) throw new Error("it was made from another sims.zip");
  const bytes = await gz;
  // gzip in the file itself; a host that served it with Content-Encoding: gzip already inflated it
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
}

async function boot() {
  const t0 = performance.now();
  const marks = {}; // ms since t0 at which each piece was in (worker.info.marks)
  const manifest = fetchManifest();
  const zip = fetchBytes("py/sims.zip");
  zip.catch(() => {}); // observed below
  const files = zip.then(readZip); // inflated while Pyodide loads
  files.then(() => (marks.files = performance.now() - t0)).catch(() => {});
  // the snapshot is fetched and inflated from the start, and used only if its Pyodide is the one loaded
  const snapshot = manifest.then((m) => (m && m.file ? snapshotBytes(m, zip) : null));
  snapshot.then(() => (marks.snapshot = performance.now() - t0)).catch(() => {}); // loadPyodide observes it
  const indexURL = new URL("vendor/pyodide/", BASE).href;
  const early = compileEarly(`${indexURL}pyodide.asm.wasm`); // compiled while the snapshot arrives (wasm-start.js)
  const { loadPyodide, version } = await import(new URL("vendor/pyodide/pyodide.mjs", BASE).href);
  const options = { indexURL, stdout: () => {}, stderr: (s) => console.warn(s) };
  let pyodide = null;
  let start = "fresh";
  const m = await manifest;
  // the snapshot's memory may be larger than the wasm's initial memory; either way the wasm is early's
  const undo = growAtInstantiation(m && m.file ? m.memory : 0, early);
  try {
    if (m && m.file && m.pyodide === version) {
      try {
        // a promise: Pyodide loads pyodide.asm.mjs while the snapshot arrives (and the wasm compiles)
        // Restored, Python has /app on sys.path, the bridge and every topic imported (web/pyodide/warm.py);
        // only the files are missing (Emscripten keeps them outside the memory), so they are written again
        pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshot });
        start = "snapshot";
      } catch (err) {
        console.info(`Pyodide starts without its snapshot: ${err && err.message ? err.message : err}`);
      }
    }
    pyodide ??= await loadPyodide(options);
  } finally {
    undo();
  }
  const unpacked = await files;
  const t1 = performance.now();
  writeFiles(pyodide.FS, unpacked, "/app");
  if (start === "fresh") pyodide.runPython("import sys; sys.path.insert(0, '/app')");
  bridgeCall = pyodide.pyimport("web.pyodide.bridge").call;
  if (EDITED) lockdown();
  const t2 = performance.now();
  return {
    python: pyodide.runPython("import sys; sys.version.split()[0]"),
    start, // "snapshot" | "fresh": how Python started (read as sim.worker.info.start)
    load_ms: t2 - t0, // since the worker started
    pyodide_ms: t1 - t0, // loadPyodide (or the snapshot's restore), and sims.zip fetched and inflated, in parallel
    import_ms: t2 - t1, // writing sims.zip's files and importing the bridge (and through it sims.core); from the snapshot, the writing only
    marks, // files: sims.zip fetched and inflated; snapshot: the snapshot fetched and inflated
  };
}

const booted = boot();
booted.then(
  (info) => self.postMessage({ id: 0, ok: true, result: info, ready: true }),
  (err) => self.postMessage({ id: 0, ok: false, error: `Python failed to start: ${err && err.message ? err.message : err}`, ready: true }),
);

self.onmessage = (e) => {
  const { id, op, args } = e.data;
  queue = queue.then(async () => {
    try {
      await booted;
    } catch (err) {
      self.postMessage({ id, ok: false, error: `Python failed to start: ${err}` });
      return;
    }
    const s = performance.now();
    let reply;
    try {
      if (RUNS_EDITED_CODE.has(op) && !EDITED) throw new Error(`${op} runs only in the edited-policy worker (edited.js)`);
      reply = JSON.parse(bridgeCall(op, JSON.stringify(args)));
    } catch (err) {
      const text = String(err && err.message ? err.message : err);
      // a Python-level error comes back as {ok: false}; reaching here means Pyodide itself broke
      reply = {
        ok: false,
        error: text.split("\n").slice(-3).join(" "),
        fatal: /fatal|memory access out of bounds|unreachable/i.test(text),
      };
    }
    reply.id = id;
    reply.ms = performance.now() - s;
    self.postMessage(reply);
  });
};
