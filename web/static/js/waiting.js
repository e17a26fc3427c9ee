// The status line of a preset page while its poster plays and Python starts (loaded by the element
// only on a page, never in an embed, which says its own thing there).
import { el } from "./sim-ui.js";

/**
 * The status line while the poster plays and Python starts: what works already, what waits, and
 * how long the start has taken so far (updated each second, with a moving bar), until the
 * element goes live or something else takes the line.
 */
export function waitingStatus(sim) {
  const t0 = performance.now();
  const say = el("span");
  const bar = el("progress", { class: "cs-starting", "aria-label": "Python is starting" });
  const show = () => {
    const s = Math.round((performance.now() - t0) / 1000);
    say.textContent = `Preview while Python starts (${s} s): play, pause, seek and speed work now; Step, sliders and the sections below wait.`;
  };
  show();
  sim.status.replaceChildren(bar, " ", say);
  sim.status.hidden = false;
  const timer = setInterval(() => (sim.mode === "poster" && say.isConnected ? show() : clearInterval(timer)), 1000);
}
