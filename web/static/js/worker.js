// The simulation worker (a module worker): loads Pyodide once, unpacks our Python, then answers
// requests {id, op, args} with {id, ok, result | error, ms}. One worker serves every simulation on
// a page; requests are handled one at a time, in arrival order.
// Assets resolve relative to this file, so a blob-URL bootstrap from another origin works too.
// Named "contention-edited" (edited.js), the worker runs edited policies, and is the only one that
// does: once Pyodide is up it drops every way out of its global scope (`lockdown`).
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

async function boot() {
  const t0 = performance.now();
  const { loadPyodide } = await import(new URL("vendor/pyodide/pyodide.mjs", BASE).href);
  const indexURL = new URL("vendor/pyodide/", BASE).href;
  const [pyodide, zip] = await Promise.all([
    loadPyodide({ indexURL, stdout: () => {}, stderr: (s) => console.warn(s) }),
    fetch(new URL("py/sims.zip", BASE)).then((r) => {
      if (!r.ok) throw new Error(`cannot fetch sims.zip: HTTP ${r.status}`);
      return r.arrayBuffer();
    }),
  ]);
  const t1 = performance.now();
  pyodide.unpackArchive(zip, "zip", { extractDir: "/app" });
  pyodide.runPython("import sys; sys.path.insert(0, '/app')");
  bridgeCall = pyodide.pyimport("web.pyodide.bridge").call;
  if (EDITED) lockdown();
  const t2 = performance.now();
  return {
    python: pyodide.runPython("import sys; sys.version.split()[0]"),
    load_ms: t2 - t0, // since the worker started
    pyodide_ms: t1 - t0, // loadPyodide and the fetch of sims.zip, in parallel
    import_ms: t2 - t1, // unpacking and importing the bridge (and through it sims.core)
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
