// "Space-time diagram" on a consensus page: one line per server, every message an arrow, faults as
// bands, each node's role and term, the client's commands and any safety violation with its
// reason. The worker replays the chosen panel from the start of this page's own run (its seed,
// its parameters, the faults injected so far) to the current time with recording on
// (web/pyodide/ops_diagram.py, sims/consensus/diagram.py); the page shows the SVG as an image
// (no script of its can run) and offers it for download. Drawn again at the current time on demand.
import { el } from "./sim-ui.js";

const sim = document.querySelector("contention-sim");
const host = document.querySelector("[data-diagram]");

async function build() {
  await sim.whenLive();
  const info = await sim.worker.request("diagram_info", { id: sim.simId });
  if (!info.panels.length) return;
  host.hidden = false;
  const pick = el(
    "select",
    { "aria-label": "Panel to draw", "data-diagram-panel": "" },
    ...info.panels.map((n) => el("option", { value: n, selected: n === sim.panelNames[0] }, n)),
  );
  const draw = el("button", { type: "button", class: "cs-btn", "data-diagram-draw": "", text: "Draw it up to now" });
  const status = el("span", { class: "muted", "data-diagram-status": "", role: "status", "aria-live": "polite" });
  const img = el("img", { class: "diagram-img", alt: "", "data-diagram-img": "" });
  const save = el("a", { class: "cs-btn", "data-diagram-save": "", text: "Download SVG", hidden: true });
  const frame = el("div", { class: "diagram-frame", hidden: true }, img);
  let url = null;
  draw.addEventListener("click", async () => {
    sim.pause();
    draw.disabled = true;
    status.textContent = "Replaying with recording on…";
    try {
      const r = await sim.worker.request("diagram", { id: sim.simId, panel: pick.value, t: sim.t });
      if (url) URL.revokeObjectURL(url);
      url = URL.createObjectURL(new Blob([r.svg], { type: "image/svg+xml" }));
      img.src = url;
      frame.svgText = r.svg; // what is drawn, for tests (a page may not fetch its own blob: connect-src 'self')
      img.alt = `Space-time diagram of ${pick.value}: ${r.messages} messages in the first ${r.t} s`;
      img.dataset.messages = String(r.messages);
      save.href = url;
      save.download = `${sim.meta.name}-${pick.value}-${r.t.toFixed(2)}s.svg`;
      save.hidden = false;
      frame.hidden = false;
      const cut = sim.t > r.t ? ` (the diagram stops at ${info.max_seconds} s)` : "";
      status.textContent = `${pick.value}: ${r.messages} messages, 0–${r.t.toFixed(2)} s${cut}. Scroll the picture sideways.`;
    } catch (err) {
      status.textContent = String(err.message || err);
    } finally {
      draw.disabled = false;
    }
  });
  host.append(
    el("h2", { text: "Space-time diagram" }),
    el("p", {
      class: "muted",
      text: "Every message of one panel's run so far as an arrow between the servers' lines: who led when, in which term, what was dropped, and where the checker caught a violation.",
    }),
    el("div", { class: "diagram-controls" }, pick, draw, save, status),
    frame,
  );
}

if (sim && host) build().catch(() => {});
