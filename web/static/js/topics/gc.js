// Renderers of topic `gc`'s view kinds (sims/gc/topic.toml `views`), loaded by render.js's
// loadTopic("gc") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, fitText, text } from "../draw.js";

// One colour per cell code of the strip (sims/gc/panel.py view): free, live, garbage, and while a
// mark is under way the tri-colour of each object: white (not reached yet), grey (reached, not
// scanned: the wavefront), black (scanned).
function cellColour(code, theme) {
  switch (code) {
    case "L":
      return theme.good;
    case "G":
      return theme.bad;
    case "w":
      return theme.muted;
    case "g":
      return theme.accent;
    case "b":
      return theme.fg;
    default:
      return theme.track;
  }
}

const LEGEND = [
  ["L", "live"],
  ["G", "garbage"],
  [".", "free"],
];
const MARKING = [
  ["w", "white"],
  ["g", "grey"],
  ["b", "black"],
  [".", "free"],
];

// gc: the heap as a strip of cells in address order (two rows), the collector's regions under
// it, and each pause of the last `window` seconds as a bar on a timeline (height = its length)
registerRenderer("gc", (ctx, v, box, theme) => {
  const strip = v.strip || "";
  const heap = v.heap || 1;
  const width = box.w - 2 * PAD;
  // the legend, and the bytes in objects beside it, or under it where the two do not fit on one line
  const legend = v.marking ? MARKING : LEGEND;
  let lx = PAD;
  for (const [code, label] of legend) {
    ctx.fillStyle = cellColour(code, theme);
    ctx.fillRect(lx, 4, 8, 8);
    text(ctx, label, lx + 11, 9, theme.muted);
    lx += 16 + ctx.measureText(label).width;
  }
  const used = `${fmt(v.used || 0)} of ${fmt(heap)} B in objects`;
  const aside = lx + 8 + ctx.measureText(used).width <= box.w - PAD;
  text(ctx, used, aside ? box.w - PAD : PAD, aside ? 9 : 23, theme.fg, aside ? "right" : "left");
  const rows = 2;
  const per = Math.ceil(strip.length / rows) || 1;
  const top = aside ? 18 : 32;
  const rowH = Math.max(10, Math.min(28, (box.h - top - 92) / rows));
  const cw = width / per;
  for (let i = 0; i < strip.length; i++) {
    const r = Math.floor(i / per);
    ctx.fillStyle = cellColour(strip[i], theme);
    ctx.fillRect(PAD + (i % per) * cw, top + r * (rowH + 4), Math.max(1, cw - 0.5), rowH);
  }
  // regions (semispaces, old space and nursery): a bracket under the strip, per row
  const ry = top + rows * (rowH + 4) + 2;
  const half = heap / rows;
  let named = -Infinity; // right edge of the last region name, so two never run into each other
  for (const reg of v.regions || []) {
    for (let r = 0; r < rows; r++) {
      const lo = Math.max(reg.lo, r * half);
      const hi = Math.min(reg.hi, (r + 1) * half);
      if (hi <= lo) continue;
      const x0 = PAD + ((lo - r * half) / half) * width;
      const x1 = PAD + ((hi - r * half) / half) * width;
      ctx.fillStyle = theme.muted;
      ctx.fillRect(x0, top + r * (rowH + 4) + rowH + 1, Math.max(1, x1 - x0 - 2), 1);
      if (r === Math.floor(reg.lo / half) && x0 > named + 6) {
        const w = fitText(ctx, [reg.name], x0 + 2, ry + 8, theme.muted, "left", Math.min(x1 - x0, box.w - PAD - x0));
        if (w) named = x0 + 2 + w;
      }
    }
  }
  // the pause timeline: the last `window` seconds, newest on the right
  const ty = ry + 22;
  const th = Math.max(20, box.h - ty - 18);
  const win = v.window || 1;
  const t1 = v.t || 0;
  const t0 = t1 - win;
  ctx.fillStyle = theme.track;
  ctx.fillRect(PAD, ty + th, width, 1);
  const pauses = v.pauses || [];
  const longest = Math.max(0.001, ...pauses.map((p) => p[1]));
  for (const [s, d] of pauses) {
    if (s + d < t0) continue;
    const x = PAD + ((Math.max(s, t0) - t0) / win) * width;
    const w = Math.max(1, (d / win) * width);
    const h = Math.max(2, (d / longest) * th);
    ctx.fillStyle = d >= 0.01 ? theme.bad : theme.accent;
    ctx.fillRect(x, ty + th - h, w, h);
  }
  const failed = v.failed ? `${fmt(v.failed)} allocations failed` : "";
  const fw = failed ? ctx.measureText(failed).width + 12 : 0;
  if (failed) text(ctx, failed, box.w - PAD, box.h - 8, theme.bad, "right");
  const ms = fmt(longest * 1000);
  fitText(
    ctx,
    [
      `pauses in the last ${fmt(win)} s (longest ${ms} ms; red: ≥ 10 ms)`,
      `pauses, last ${fmt(win)} s (longest ${ms} ms)`,
      `pauses (max ${ms} ms)`,
    ],
    PAD,
    box.h - 8,
    theme.muted,
    "left",
    width - fw,
  );
});
