// The preset page: the URL hash holds the state (#seed=7&speed=2&t=12.5&panels=lru,arc, plus
// o.workload.rate=5 for parameters and actions=0@12.5 for injected events), so a copied link
// reproduces the exact moment (the page applies the hash to the element's attributes inline,
// before the element starts). Keys anywhere on the page drive the simulation.
import { linkHash } from "./link.js";

const sim = document.querySelector("contention-sim");

export const linkFor = (state) => `${location.origin}${location.pathname}#${linkHash(state)}`;

if (sim) {
  let last = 0;
  const update = (force) => {
    const now = performance.now();
    if (!force && now - last < 1000) return;
    last = now;
    if (!sim.meta || sim.state === "loading" || sim.state === "error") return;
    history.replaceState(null, "", linkFor(sim.linkState()));
  };
  sim.addEventListener("cs-change", () => update(true));
  sim.addEventListener("cs-state", (e) => update(e.detail === "paused"));

  const copy = document.querySelector("[data-copy-link]");
  copy?.addEventListener("click", async () => {
    const url = linkFor(sim.linkState());
    history.replaceState(null, "", url);
    const note = document.querySelector("[data-copy-note]");
    try {
      await navigator.clipboard.writeText(url);
      if (note) note.textContent = "Link copied.";
    } catch {
      if (note) note.textContent = url; // no clipboard permission: show it to copy by hand
    }
  });

  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.target !== document.body || !sim.clock) return;
    sim.handleKey(e);
  });
  window.addEventListener("hashchange", () => {
    const h = new URLSearchParams(location.hash.slice(1));
    if (h.has("t") && Math.abs(Number(h.get("t")) - sim.t) > 1e-6) sim.seek(Number(h.get("t"))).catch(() => {});
  });
}
