// "Jump to divergence" on a preset page: pick two panels; the worker replays them in
// recording mode (web/pyodide/ops_diverge.py) to the first event where their decisions differ, the
// simulation seeks there, and each policy's one-sentence reason shows side by side. "Next
// divergence" goes on from there; the count is the divergences found so far.
import { el } from "./sim-ui.js";

const sim = document.querySelector("contention-sim");
const host = document.querySelector("[data-diverge]");

function side(label) {
  const title = el("h3", { class: "diverge-title", text: label });
  const reason = el("p", { class: "diverge-reason", "data-diverge-reason": label });
  return { box: el("div", { class: "diverge-side" }, title, reason), title, reason };
}

async function build() {
  // a topic whose panels record no decisions (consensus, for example) gets no controls; the build
  // says which (meta.decides), so the controls show, waiting, while Python starts
  await sim.whenReady();
  let decides = sim.meta.decides;
  if (decides === undefined) {
    await sim.whenLive();
    decides = (await sim.worker.request("diverge_info", { id: sim.simId })).records;
  }
  const names = sim.meta.panels.map((p) => p.name);
  host.dataset.divergeState = decides && names.length >= 2 ? "ready" : "none";
  if (host.dataset.divergeState === "none") return;
  // by default the first two panels on screen, following the panel picker until the reader picks
  const onScreen = (i) => sim.panelNames[i] ?? names[i];
  const select = (i) =>
    el(
      "select",
      { "aria-label": `Panel ${i + 1} to compare`, "data-diverge-panel": String(i) },
      ...names.map((n) => el("option", { value: n, selected: n === onScreen(i) }, n)),
    );
  const pickA = select(0);
  const pickB = select(1);
  let picked = false;
  sim.addEventListener("cs-change", () => {
    if (picked) return;
    pickA.value = onScreen(0);
    pickB.value = onScreen(1);
  });
  const status = el("span", { class: "muted", "data-diverge-count": "", role: "status", "aria-live": "polite" });
  const jump = el("button", { type: "button", class: "cs-btn", "data-diverge-jump": "", text: "Jump to divergence" });
  const next = el("button", { type: "button", class: "cs-btn", "data-diverge-next": "", text: "Next divergence" });
  next.disabled = true;
  const a = side("a");
  const b = side("b");
  const sides = el("div", { class: "diverge-sides" }, a.box, b.box);
  sides.style.cssText = "grid-template-columns:1fr 1fr;gap:1rem";
  const showSides = (on) => (sides.style.display = on ? "grid" : "none"); // a display rule would beat [hidden]
  showSides(false);

  async function go(restart) {
    const first = pickA.value;
    const second = pickB.value;
    if (first === second) {
      status.textContent = "Pick two different panels.";
      return;
    }
    jump.disabled = next.disabled = true;
    status.textContent = "Replaying both panels…";
    let more = false;
    try {
      await sim.whenLive();
      sim.pause();
      const r = await sim.worker.request("diverge", { id: sim.simId, a: first, b: second, restart });
      const d = r.divergence;
      if (!d) {
        status.textContent = r.count
          ? `No more divergences: ${r.count} in all ${r.end} events.`
          : `${first} and ${second} decide alike on all ${r.end} events.`;
        return;
      }
      await sim.seek(d.t);
      sim.mark(d.keys); // the keys the two decisions moved, marked in the views
      a.title.textContent = `${first}: ${d.a.decision}`;
      a.reason.textContent = d.a.reason;
      b.title.textContent = `${second}: ${d.b.decision}`;
      b.reason.textContent = d.b.reason;
      showSides(true);
      sides.scrollIntoView({ block: "nearest", behavior: "smooth" }); // the answer, on screen
      status.textContent = `Divergence ${r.count} so far: event #${d.index} (${d.event}) at t = ${d.t.toFixed(3)} s`;
      host.dataset.divergences = String(r.count);
      host.dataset.t = String(d.t);
      more = true;
    } catch (err) {
      status.textContent = err.message || String(err);
    } finally {
      jump.disabled = false;
      next.disabled = !more;
    }
  }

  jump.addEventListener("click", () => go(true));
  next.addEventListener("click", () => go(false));
  const reset = () => {
    picked = true;
    next.disabled = true;
    showSides(false);
    sim.mark([]);
    status.textContent = "";
  };
  pickA.addEventListener("change", reset);
  pickB.addEventListener("change", reset);
  host.append(
    el("h2", { text: "Where do two panels first disagree?" }),
    el("div", { class: "diverge-controls" }, pickA, el("span", { text: " vs " }), pickB, " ", jump, " ", next, " ", status),
    sides,
  );
  if (sim.mode !== "live") {
    jump.disabled = true;
    status.textContent = "Waits for Python, which is starting…";
    await sim.whenLive();
    jump.disabled = false;
    status.textContent = "";
  }
}

if (sim && host) build().catch(() => {});
