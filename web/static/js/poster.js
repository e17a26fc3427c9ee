// The poster and its handover. Until Python is live, the element plays the build's precomputed
// frames (the poster); when the worker is ready it hands over at the poster frame on screen, and
// the live frame at that time must equal the precomputed one, else the page says so.
//
// States of an element: loading -> poster -> live, or loading -> live; any -> error. A parameter
// change during the poster drops it (its frames are of the preset as written): poster -> loading.

import { MAX_LEAD } from "./driver.js";

export class Poster {
  /** `frames`: [{t, panels, series}], t ascending, frames[0] at the preset's start (meta.start, usually 0). */
  constructor(frames) {
    this.frames = frames;
    this.shown = -1; // index of the frame on screen; its series rows (and all before) are applied
  }

  /** Index of the last frame at or before `t`. */
  indexAt(t) {
    let k = 0;
    while (k + 1 < this.frames.length && this.frames[k + 1].t <= t) k++;
    return k;
  }

  /**
   * Show frame `k`: feeds the chart rows it needs to `charts` (resetting them when going back)
   * and returns the frame.
   */
  show(k, charts) {
    if (k < this.shown) {
      charts.reset();
      this.shown = -1;
    }
    for (let i = this.shown + 1; i <= k; i++) charts.apply(this.frames[i].series);
    this.shown = k;
    return this.frames[k];
  }

  /** The frame the live simulation must reproduce at the handover. */
  get handoverFrame() {
    return this.frames[Math.max(0, this.shown)];
  }
}

/** What differs between the live frame and the expected one, for the named panels. */
export function frameDiffs(live, expected, panelNames) {
  const diffs = [];
  if (live.t !== expected.t) diffs.push(`t ${live.t} != ${expected.t}`);
  for (const n of panelNames) {
    const [a, b] = [live.panels[n] || {}, expected.panels[n] || {}];
    if (JSON.stringify(a.metrics) !== JSON.stringify(b.metrics)) diffs.push(`${n} metrics`);
    else if (JSON.stringify(a.view) !== JSON.stringify(b.view)) diffs.push(`${n} view`);
  }
  return diffs;
}

/** Leave the poster (the element's parameters or panels changed): its frames are of the preset as written. */
export function dropPoster(sim) {
  if (sim.mode !== "poster") return;
  sim.poster = null;
  sim.mode = "loading";
  sim.clock.maxLead = MAX_LEAD;
  sim.charts.reset();
}

/** Hand over from the poster to the live run at the frame on screen; the two must agree. */
export async function handover(sim) {
  const expected = sim.poster.handoverFrame;
  const live = await sim.worker.request("advance", { id: sim.simId, t: expected.t });
  const diffs = frameDiffs(live, expected, sim.panelNames);
  sim.handover = { t: expected.t, ok: !diffs.length, diffs };
  sim.clock.maxLead = MAX_LEAD;
  sim.clock.set(live.t);
  sim.dataset.handover = diffs.length ? "mismatch" : "ok";
  sim.mode = "live";
  if (diffs.length) {
    sim.ui.banner.hidden = false;
    sim.ui.banner.textContent =
      `Python's frame at t=${expected.t} differs from the precomputed one (${diffs.join(", ")}): ` +
      "the browser and the build disagree — please report this.";
  }
  sim.charts.reset();
  return live;
}
