// Bring your own trace: a file dropped on a preset page (or chosen with the file button) becomes the
// stream of every panel. The file is read in 1 MiB slices and sent as text to the worker, which
// parses it with the readers of `contention run --trace-format` (web/pyodide/ops_trace.py), so a
// bad row is named by its line as the CLI names it; a progress bar follows the slices. The trace
// stays in this tab: a link cannot carry it, and the page says so.
import { el } from "./sim-ui.js";

const CHUNK = 1 << 20;
const LABELS = {
  azure: "Azure LLM inference CSV (TIMESTAMP,ContextTokens,GeneratedTokens)",
  mooncake: "Mooncake JSONL (timestamp, input_length, output_length, hash_ids)",
  pages: "page numbers, whitespace-separated",
  keys: "cache keys, one per line",
  arrivals: "arrival times in seconds, one per line",
};
let uploads = 0;

/** The byte-exact line of the first bad UTF-8 sequence of `buf`, whose first line is `line`. */
function badUtf8Line(buf, line) {
  const text = new TextDecoder().decode(buf); // lenient: bad bytes become U+FFFD
  const at = text.indexOf("\uFFFD");
  return line + (text.slice(0, Math.max(0, at)).match(/\n/g) || []).length;
}

export class TraceDrop {
  constructor(host, sim) {
    this.host = host;
    this.sim = sim;
    this.busy = false;
    this.upload = null; // the upload id of the trace now playing
  }

  async attach() {
    await this.sim.whenReady();
    // the build says which formats the preset takes (meta.trace_formats), so the section shows,
    // waiting, while Python starts
    const formats = this.sim.meta.trace_formats ?? (await this.sim.worker.request("trace_formats", { preset: this.sim.meta.name })).formats;
    if (!formats.length) return; // this preset's stream takes no trace file
    this.formats = formats;
    this._build();
    this.host.hidden = false;
    if (this.sim.mode !== "live") {
      this.choose.disabled = this.format.disabled = true;
      this.detected.textContent = "Waits for Python, which is starting…";
      this.sim
        .whenLive()
        .then(() => {
          this.choose.disabled = this.format.disabled = false;
          this.detected.textContent = "";
        })
        .catch(() => {});
    }
    const page = document.documentElement;
    page.addEventListener("dragover", (e) => {
      if (![...(e.dataTransfer?.types || [])].includes("Files")) return;
      e.preventDefault();
      this.host.classList.add("td-over");
    });
    page.addEventListener("dragleave", (e) => {
      if (!e.relatedTarget) this.host.classList.remove("td-over");
    });
    page.addEventListener("drop", (e) => {
      const file = e.dataTransfer?.files?.[0];
      if (!file) return;
      e.preventDefault();
      this.host.classList.remove("td-over");
      this.load(file);
    });
  }

  _build() {
    const choose = el("input", { type: "file", class: "td-file", onchange: (e) => e.target.files[0] && this.load(e.target.files[0]) });
    this.choose = choose;
    this.format = el(
      "select",
      { "aria-label": "Trace format" },
      el("option", { value: "auto", text: "detect the format" }),
      ...this.formats.map((f) => el("option", { value: f, text: `${f}: ${LABELS[f] || f}` })),
    );
    this.progress = el("progress", { max: "1", value: "0", hidden: true, "aria-label": "Reading the trace" });
    this.status = el("p", { class: "td-status", role: "status", "aria-live": "polite" });
    this.detected = el("p", { class: "td-detected", "aria-live": "polite" });
    this.reset = el("button", { type: "button", class: "cs-btn", text: "Back to the preset's own stream", onclick: () => this.unload() });
    this.note = el(
      "p",
      { class: "td-note", hidden: true },
      "Your trace stays in this tab: a link cannot carry it. A copied link opens this preset with its own stream, not your trace. ",
      this.reset,
    );
    this.host.append(
      el("h2", { text: "Bring your own trace" }),
      el(
        "p",
        { class: "td-help" },
        "Drop a file anywhere on this page, or choose one, and it becomes the stream of every panel. This preset takes ",
        el("span", { class: "td-formats", text: this.formats.map((f) => LABELS[f] || f).join("; ") }),
        ". See docs/traces.md for the formats and where to get real traces.",
      ),
      el("div", { class: "td-row" }, el("label", {}, "File ", choose), el("label", {}, "Format ", this.format)),
      this.detected,
      this.progress,
      this.status,
      this.note,
    );
  }

  _say(text, error = false) {
    this.status.textContent = text;
    this.status.classList.toggle("td-error", error);
    this.status.setAttribute("role", error ? "alert" : "status");
  }

  /**
   * The format to read `file` as: the one chosen, else the one detected from its first row; when
   * that row plainly is a trace of another kind than this page takes, ask first (null: the reader
   * said no). The page says what it detected either way.
   */
  async _formatOf(file) {
    if (this.format.value !== "auto") return this.format.value;
    const head = new TextDecoder().decode(await file.slice(0, 65536).arrayBuffer());
    const r = await this.sim.worker.request("trace_detect", { preset: this.sim.meta.name, text: head });
    const as = LABELS[r.format] || r.format;
    if (!r.ask) {
      this.detected.textContent = `Detected: ${as}.`;
      return r.format;
    }
    this.host.dataset.state = "asking";
    const yes = el("button", { type: "button", class: "cs-btn", "data-trace-anyway": "", text: `Read it as ${as}` });
    const no = el("button", { type: "button", class: "cs-btn", "data-trace-cancel": "", text: "Cancel" });
    this.detected.replaceChildren(
      `${file.name} looks like ${LABELS[r.looks] || r.looks}, which this page's workload does not take: it takes ${this.formats.map((f) => LABELS[f] || f).join("; ")}. `,
      yes,
      " ",
      no,
    );
    const ok = await new Promise((resolve) => {
      yes.onclick = () => resolve(true);
      no.onclick = () => resolve(false);
    });
    this.detected.textContent = ok ? `Reading it as ${as}, as you asked.` : "";
    return ok ? r.format : null;
  }

  /** Read `file` into the worker, then restart the simulation on it. */
  async load(file) {
    if (this.busy || !this.formats) return;
    this.busy = true;
    const sim = this.sim;
    const worker = sim.worker;
    const upload = `trace-${++uploads}`;
    sim.pause();
    this.host.dataset.state = "reading";
    const format = await this._formatOf(file).catch(() => this.format.value);
    if (!format) {
      this.busy = false;
      this.host.dataset.state = this.upload ? "loaded" : "idle"; // what played before plays on
      return;
    }
    this.host.dataset.state = "reading";
    this.progress.hidden = false;
    this.progress.value = 0;
    this._say(`Reading ${file.name}…`);
    try {
      await worker.request("trace_begin", { upload, preset: sim.meta.name, format, name: file.name, size: file.size });
      const decoder = new TextDecoder("utf-8", { fatal: true });
      let lines = 0;
      let rows = 0;
      for (let off = 0; off < file.size; off += CHUNK) {
        const buf = await file.slice(off, off + CHUNK).arrayBuffer();
        let text;
        try {
          text = decoder.decode(buf, { stream: off + CHUNK < file.size });
        } catch {
          throw new Error(`${file.name}:${badUtf8Line(buf, lines + 1)}: not UTF-8 text`);
        }
        const r = await worker.request("trace_chunk", { upload, text });
        lines = r.lines;
        rows = r.rows;
        const done = Math.min(1, (off + CHUNK) / file.size);
        this.progress.value = done;
        this._say(`Reading ${file.name}: ${rows.toLocaleString()} rows (${Math.round(done * 100)}%)`);
      }
      const end = await worker.request("trace_end", { upload });
      sim.createOp = "trace_create";
      sim.createArgs = { upload };
      await sim.restart();
      if (sim.state === "error") throw new Error(sim.dataset.error || "the simulation failed on this trace");
      if (this.upload) worker.request("trace_forget", { upload: this.upload }).catch(() => {});
      this.upload = upload;
      this.host.dataset.state = "loaded";
      this.host.dataset.format = end.format;
      this._say(
        `Playing ${end.name}: ${end.rows.toLocaleString()} ${end.format} rows over ${Math.round(end.duration * 10) / 10} s, as the stream of every panel.`,
      );
      this._showTraceLink(file.name, end.format);
    } catch (err) {
      worker.request("trace_forget", { upload }).catch(() => {});
      if (sim.createArgs?.upload === upload) this._fallBack();
      this.host.dataset.state = "error";
      this._say(err && err.message ? err.message : String(err), true);
    } finally {
      this.progress.hidden = true;
      this.busy = false;
    }
  }

  /** A failed trace leaves the preset's own stream playing. */
  async _fallBack() {
    this.sim.createOp = null;
    this.sim.createArgs = null;
    this.upload = null;
    this._showTraceLink(null);
    await this.sim.restart().catch(() => {});
  }

  /** Back to the preset's own stream. */
  async unload() {
    if (this.busy) return;
    const upload = this.upload;
    await this._fallBack();
    if (upload) this.sim.worker.request("trace_forget", { upload }).catch(() => {});
    delete this.host.dataset.format;
    this.host.dataset.state = "idle";
    this._say("");
  }

  /** The copy button and the terminal line say what the link and the CLI reproduce. */
  _showTraceLink(name, format) {
    this.note.hidden = !name;
    const copy = document.querySelector("[data-copy-link]");
    if (copy) {
      copy.dataset.label ??= copy.textContent;
      copy.textContent = name ? "Copy link (without your trace)" : copy.dataset.label;
    }
    // the trace sets the arrivals: the workload's sliders would change nothing
    for (const input of this.sim.querySelectorAll('.cs-param input[data-target^="workload."]')) {
      input.disabled = !!name;
      input.title = name ? "Your trace sets the arrivals" : "";
    }
    const code = document.querySelector("details.cli code");
    if (code) {
      code.dataset.text ??= code.textContent;
      code.textContent = name ? `${code.dataset.text} --trace-in ${name} --trace-format ${format}` : code.dataset.text;
    }
  }
}

const host = document.querySelector("[data-trace-drop]");
const sim = document.querySelector("contention-sim");
if (host && sim) {
  customElements
    .whenDefined("contention-sim")
    .then(() => new TraceDrop(host, sim).attach())
    .catch(() => {}); // a page whose simulation cannot start offers no trace drop
}
