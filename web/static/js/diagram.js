// "Space-time diagram" on a consensus, replication or election page: one line per server, every
// message an arrow, faults as bands, each node's role, the clients' operations (or who leads
// when) and any violation with its reason. The worker replays the chosen panel from the start of
// this page's own run (its seed, its parameters, the faults injected so far) with recording on
// and draws it up to the clock's time, "now" marked at the right edge (web/pyodide/ops_diagram.py,
// sims/net/diagram.py); the page shows the SVG as an image (no script of its can run) and offers
// it for download. Once drawn it follows the clock while "Follow the clock" is ticked: drawn
// again at once when the clock is sought, paused or a fault injected, and at most once a second
// while it plays. Loaded only by pages that show it (sitebuild/templates/play.html).
import { el } from "./sim-ui.js";

const sim = document.querySelector("contention-sim");
const host = document.querySelector("[data-diagram]");
const EVERY_MS = 1000; // while playing: at most one redraw a second

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
  const follow = el("input", { type: "checkbox", checked: true, "data-diagram-follow": "" });
  const followLabel = el("label", { class: "muted" }, follow, " Follow the clock");
  const status = el("span", { class: "muted", "data-diagram-status": "", role: "status", "aria-live": "polite" });
  const img = el("img", { class: "diagram-img", alt: "", "data-diagram-img": "" });
  const save = el("a", { class: "cs-btn", "data-diagram-save": "", text: "Download SVG", hidden: true });
  const frame = el("div", { class: "diagram-frame", hidden: true }, img);
  let url = null;
  let drawn = false; // following starts with the first drawing
  let busy = false;
  let again = false; // asked for while busy: draw once more when done
  let shown = { panel: null, t: -1 };
  let last = 0; // when the last drawing was asked for (ms)
  const target = () => Math.min(sim.t, sim.meta.duration, info.max_seconds);

  async function redraw() {
    if (busy) {
      again = true;
      return;
    }
    const t = target();
    if (!(t > 0)) {
      status.textContent = "Play the simulation first: nothing has happened at t = 0.";
      return;
    }
    if (shown.panel === pick.value && shown.t === t) return;
    busy = true;
    last = Date.now();
    draw.disabled = true;
    const panel = pick.value;
    if (!drawn) status.textContent = "Replaying with recording on…";
    try {
      const r = await sim.worker.request("diagram", { id: sim.simId, panel, t });
      const old = url;
      url = URL.createObjectURL(new Blob([r.svg], { type: "image/svg+xml" }));
      const atEnd = !drawn || frame.scrollLeft + frame.clientWidth >= frame.scrollWidth - 8;
      img.onload = () => {
        if (old) URL.revokeObjectURL(old);
        if (atEnd && follow.checked) frame.scrollLeft = frame.scrollWidth; // keep "now" in sight
      };
      img.src = url;
      frame.svgText = r.svg; // what is drawn, for tests (a page may not fetch its own blob: connect-src 'self')
      frame.draws = (frame.draws || 0) + 1; // and how often, for the test of the throttle
      img.alt = `Space-time diagram of ${panel}: ${r.messages} messages in the first ${r.t} s`;
      img.dataset.messages = String(r.messages);
      img.dataset.t = String(r.t);
      save.href = url;
      save.download = `${sim.meta.name}-${panel}-${r.t.toFixed(2)}s.svg`;
      save.hidden = false;
      frame.hidden = false;
      drawn = true;
      shown = { panel, t: r.t };
      const cut = sim.t > r.t + 1e-9 && r.t >= info.max_seconds ? ` (the diagram stops at ${info.max_seconds} s)` : "";
      status.textContent = `${panel}: ${r.messages} messages, 0–${r.t.toFixed(2)} s${cut}. Scroll the picture sideways.`;
    } catch (err) {
      status.textContent = String(err.message || err);
    } finally {
      busy = false;
      draw.disabled = false;
    }
    if (again) {
      again = false;
      schedule(true);
    }
  }

  // now: seek, pause, inject (the clock jumped or stopped); otherwise at most once per EVERY_MS
  let timer = null;
  function schedule(now) {
    if (!drawn || !follow.checked) return;
    const wait = now ? 0 : Math.max(0, last + EVERY_MS - Date.now());
    if (timer !== null) {
      if (!now) return;
      clearTimeout(timer);
    }
    timer = setTimeout(() => {
      timer = null;
      redraw();
    }, wait);
  }
  sim.addEventListener("cs-change", () => schedule(true));
  sim.addEventListener("cs-state", (e) => schedule(e.detail !== "running"));
  setInterval(() => {
    if (sim.dataset.state === "running") schedule(false);
  }, EVERY_MS / 4);
  draw.addEventListener("click", () => {
    shown = { panel: null, t: -1 };
    redraw();
  });
  pick.addEventListener("change", () => schedule(true));
  follow.addEventListener("change", () => schedule(true));
  host.append(
    el("h2", { text: "Space-time diagram" }),
    el("p", {
      class: "muted",
      text: "Every message of one panel's run so far as an arrow between the servers' lines: who led when, what was dropped, the clients' operations, and where a violation was caught. Once drawn it follows the clock: seek, and it is drawn again up to then.",
    }),
    el("div", { class: "diagram-controls" }, pick, draw, followLabel, save, status),
    frame,
  );
}

if (sim && host) build().catch(() => {});
