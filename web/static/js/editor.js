// "Edit a policy" on a preset page: the Python source of any of the preset's policies in
// CodeMirror 6 (our own bundle, vendor/codemirror/, loaded on first use), and Run: the edit runs
// as a new panel ("lru (edited)") beside the others on the same stream, replayed from 0 to now.
// The code runs in the edited policies' worker only (edited.js, web/pyodide/ops_editor.py). Errors
// show their line in the editor; a panel that stops later (an exception, an invariant, the step
// budget, the watchdog) says so in its figure and in the editor. The edits travel in the link
// (edits.js), so a copy reproduces them; the reader's own need no consent in this tab (consent.js).
import { remember } from "./consent.js";
import { EditedRun, prestart } from "./edited.js";
import { makeEdit, withEdits } from "./edits.js";
import { panelColors } from "./palette.js";
import { el } from "./sim-ui.js";

const BUNDLE = new URL("../vendor/codemirror/codemirror.js", import.meta.url);
const WATCH_MS = 250; // how often the edited panels' state is read from the latest frame

let cm = null; // the CodeMirror bundle's exports, once loaded
const loadEditor = () => (cm ||= import(BUNDLE.href));

/** A field of line decorations: the line at fault, or none. */
function errorLine(m) {
  const set = m.StateEffect.define();
  const mark = m.Decoration.line({ class: "cm-error-line" });
  const field = m.StateField.define({
    create: () => m.Decoration.none,
    update(deco, tr) {
      for (const e of tr.effects) {
        if (!e.is(set)) continue;
        const n = e.value;
        if (!n || n > tr.state.doc.lines) return m.Decoration.none;
        return m.Decoration.set([mark.range(tr.state.doc.line(n).from)]);
      }
      return tr.docChanged ? m.Decoration.none : deco.map(tr.changes);
    },
    provide: (f) => m.EditorView.decorations.from(f),
  });
  return { set, field };
}

class PolicyEditor {
  constructor(sim, host) {
    this.sim = sim;
    this.host = host;
    this.view = null;
    this.base = null; // the panel being edited
    this.open = el("button", {
      type: "button",
      class: "cs-btn",
      "data-edit-open": "",
      text: "✎ Edit a policy",
      onclick: () => this.show().catch((err) => this.say(String(err.message || err), true)),
    });
    host.append(this.open);
    this.box = el("div", { class: "pe-box", hidden: true });
    this.pick = el("select", { "aria-label": "Policy to edit", "data-edit-pick": "", onchange: () => this.load(this.pick.value) });
    this.run = el("button", {
      type: "button",
      class: "cs-btn cs-primary",
      "data-edit-run": "",
      text: "▶ Run edit",
      onclick: () => this.apply(),
    });
    const revert = el("button", { type: "button", class: "cs-btn", text: "Original source", onclick: () => this.load(this.base, true) });
    const remove = el("button", { type: "button", class: "cs-btn", text: "Remove panel", onclick: () => this.remove() });
    const close = el("button", { type: "button", class: "cs-btn", text: "Close", onclick: () => (this.box.hidden = true) });
    this.note = el("p", { class: "pe-note", role: "status", "aria-live": "polite", "data-edit-note": "" });
    this.code = el("div", { class: "pe-code", "data-edit-code": "" });
    const help = el("p", {
      class: "pe-help muted",
      text:
        "Your code runs in this tab only, in a worker of its own that cannot reach other sites. The panel replays " +
        "the stream from 0; the mechanism checks every decision, a decision that takes over 100,000 steps stops " +
        "the panel, and so does code that runs 4 s without finishing a step.",
    });
    this.box.append(
      el("div", { class: "pe-bar" }, el("label", {}, el("span", { text: "Policy " }), this.pick), this.run, revert, remove, close),
      this.note,
      this.code,
      help,
    );
    host.append(this.box);
    setInterval(() => this.watch(), WATCH_MS);
  }

  say(text, bad = false) {
    this.note.textContent = text;
    this.note.classList.toggle("cs-error", bad);
  }

  request(op, args = {}) {
    return this.sim.worker.request(op, { id: this.sim.simId, ...args });
  }

  async show() {
    this.box.hidden = false;
    this.say("Loading the editor…");
    prestart(); // the edited policies' worker starts while the reader types
    await this.sim.whenLive();
    const [m, listed] = await Promise.all([loadEditor(), this.request("editor_policies")]);
    if (!this.view) {
      this.err = errorLine(m);
      this.view = new m.EditorView({ doc: "", extensions: [m.basicSetup, m.python(), this.err.field], parent: this.code });
    }
    this.pick.replaceChildren(
      ...listed.panels.map((p) =>
        el("option", {
          value: p.panel,
          disabled: !p.editable,
          title: p.reason || "",
          text: p.policy === p.panel ? p.panel : `${p.panel} (${p.policy})`,
        }),
      ),
    );
    const first = listed.panels.find((p) => p.editable && this.sim.panelNames.includes(p.panel)) || listed.panels.find((p) => p.editable);
    await this.load(this.base || first?.panel);
    this.say("");
  }

  /** Show the source of `base`'s policy: its current edit, else (or with `original`) the policy's own. */
  async load(base, original = false) {
    if (!base) return;
    this.base = base;
    this.pick.value = base;
    const edit = !original && this.sim.edits.find((e) => e.base === base);
    const source = edit ? edit.source : (await this.request("editor_source", { panel: base })).source;
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: source } });
    this.mark(null);
  }

  mark(line) {
    this.view?.dispatch({ effects: this.err.set.of(line) });
    if (line && line <= this.view.state.doc.lines) {
      const at = this.view.state.doc.line(line).from;
      this.view.dispatch({ selection: { anchor: at }, scrollIntoView: true });
    }
  }

  showError(err) {
    this.say(err.text || err.message, true);
    this.mark(err.line);
  }

  async apply() {
    const source = this.view.state.doc.toString();
    const base = this.base;
    this.run.disabled = true;
    this.say("Checking…");
    try {
      this.sim.editRun ||= new EditedRun(this.sim);
      const check = await this.sim.editRun.check(base, source);
      if (!check.ok) return this.showError(check.error);
      this.mark(null);
      this.say("Replaying from 0…");
      const edit = await makeEdit(base, source);
      remember([edit]); // the reader's own: a reload of this tab asks no consent
      await setEdits(this.sim, [...this.sim.edits.filter((e) => e.base !== base), edit]);
      await this.sim.editRun?.created;
      const name = base + " (edited)";
      const err = this.sim.editErrors?.[name];
      if (err) return this.showError(err);
      this.shown = null;
      this.say(`Running as “${name}”.`);
    } catch (e) {
      this.say(String(e.message || e), true);
    } finally {
      this.run.disabled = false;
    }
  }

  async remove() {
    if (!this.sim.edits.some((e) => e.base === this.base)) return;
    await setEdits(
      this.sim,
      this.sim.edits.filter((e) => e.base !== this.base),
    );
    this.say("Edited panel removed.");
  }

  /** Show why an edited panel stopped, in its figure and, when it is the one open, in the editor. */
  watch() {
    const sim = this.sim;
    if (!sim.edits?.length || !sim.frame || !sim.ui) return;
    for (const e of sim.edits) {
      const p = sim.ui.panels[e.name];
      if (!p) continue;
      const err = sim.frame.panels[e.name]?.view?.stopped || sim.editErrors?.[e.name];
      const text = err ? err.text || err.message : "";
      if (p.error.textContent !== text) {
        p.error.textContent = text;
        p.error.hidden = !text;
      }
      if (err && e.base === this.base && !this.box.hidden && this.shown !== text) {
        this.shown = text;
        this.showError(err);
      }
    }
  }
}

/** Run `edits` (replacing the element's): new meta, colours and panels, rebuilt at the current time. */
export async function setEdits(sim, edits) {
  const before = new Set(sim.edits.map((e) => e.name));
  sim.edits = edits;
  sim.meta = withEdits(sim.meta, edits);
  sim.colors = panelColors(sim.meta.panels.length, sim.dark ?? matchMedia("(prefers-color-scheme: dark)").matches);
  const names = sim.panelNames.filter((n) => !before.has(n) || edits.some((e) => e.name === n));
  for (const e of edits) if (!names.includes(e.name)) names.push(e.name);
  await sim.choosePanels(names);
}

const sim = document.querySelector("contention-sim");
const host = document.querySelector("[data-policy-editor]");
if (sim && host)
  sim.whenReady().then(
    () => {
      sim.editor = new PolicyEditor(sim, host);
      // "edit this policy" on a concept page links here with #editor=PANEL: open it on that panel
      const want = new URLSearchParams(location.hash.slice(1)).get("editor");
      if (want && sim.meta.panels.some((p) => p.name === want)) {
        sim.editor.base = want;
        sim.editor.show().then(
          () => host.scrollIntoView({ block: "start" }),
          () => {},
        );
      }
    },
    () => {},
  );
