// The page's single simulation worker, shared by every <contention-sim>: request/response over
// postMessage, and a restart when the worker dies (each simulation then rebuilds itself).
// Always started through a blob: URL that imports the worker module: a page on another origin (an
// embed) can use it as well, and a worker from a blob: URL lives under the page's
// Content-Security-Policy (a worker from a network URL would take the policy of its own response,
// none on a static host), so the site's pages allow workers from blob: only (sitebuild/csp.py).

const WORKER_URL = new URL("./worker.js", import.meta.url);
const KEEP_TIMINGS = 2000;

export class SimWorker {
  /** `name`: the worker's self.name (worker.js: "contention-edited" runs edited policies);
   * `restart`: start a new worker when this one dies (else it stays dead: edited.js decides). */
  constructor(url = WORKER_URL, { name = "contention", restart = true } = {}) {
    this.url = new URL(url, location.href);
    this.name = name;
    this.restartOnDeath = restart;
    this.dead = false;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, op}
    this.listeners = new Set(); // called with "restart" after a new worker replaced a dead one
    this.timings = {}; // op -> recent durations inside the worker, ms
    this.restarts = 0;
    this.info = null;
    this._start();
  }

  _start() {
    // import(), not a static import: a module worker's static imports count as worker loads
    // (worker-src), its dynamic ones as scripts (script-src 'self'). Messages that arrive before
    // worker.js has set its handler (a request sent right after a restart) are held, then handed on.
    const href = JSON.stringify(this.url.href);
    const failed = `(e) => self.postMessage({ id: 0, ready: true, ok: false, error: "cannot load the worker: " + e })`;
    const src =
      "const held = []; self.onmessage = (e) => held.push(e);" +
      `import(${href}).then(() => held.forEach((e) => self.onmessage(e)), ${failed});`;
    const blobUrl = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
    const worker = new Worker(blobUrl, { type: "module", name: this.name });
    this.worker = worker;
    this.ready = new Promise((resolve, reject) => {
      this._readyResolve = resolve;
      this._readyReject = reject;
    });
    this.ready.catch(() => {}); // observed through request()
    worker.onmessage = (e) => this._onMessage(e.data);
    worker.onerror = (e) => {
      e.preventDefault?.();
      this._died(`the simulation worker crashed: ${e.message || "unknown error"}`);
    };
  }

  _onMessage(msg) {
    if (!msg || typeof msg !== "object") return; // the edited-policy worker's code could send anything
    if (msg.ready) {
      if (msg.ok) {
        this.info = msg.result;
        this._readyResolve(msg.result);
      } else this._readyReject(new Error(msg.error));
      return;
    }
    if (msg.ms !== undefined) {
      const op = this.pending.get(msg.id)?.op;
      if (op) {
        const list = (this.timings[op] ||= []);
        list.push(msg.ms);
        if (list.length > KEEP_TIMINGS) list.splice(0, list.length - KEEP_TIMINGS);
      }
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new Error(msg.error));
    if (msg.fatal) this._died(msg.error);
  }

  _died(reason) {
    if (this._dying) return;
    this._dying = true;
    try {
      this.worker.terminate();
    } catch {}
    const err = new Error(reason);
    this._readyReject?.(err);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    if (!this.restartOnDeath) {
      this.dead = true;
      return;
    }
    this.restarts += 1;
    this._start();
    this._dying = false;
    for (const fn of this.listeners) fn("restart");
  }

  /** Kill the worker as a crash would (tests use it to check the restart). */
  kill() {
    this._died("killed");
  }

  /** End the worker now (the watchdog of edited.js): pending requests fail with `reason`. */
  stop(reason) {
    this._died(reason);
  }

  request(op, args) {
    if (this.dead) return Promise.reject(new Error("the worker was stopped"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, op });
      this.worker.postMessage({ id, op, args });
    });
  }

  onRestart(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

let shared = null;

/** The one worker of this page (created on first use). */
export function sharedWorker() {
  if (!shared) shared = new SimWorker();
  return shared;
}
