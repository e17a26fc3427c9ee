// The marks on the charts: scheduled events and injected actions ("event"), and the moments the
// workload itself causes ("workload": a scan starts, the working set moves; the bridge's info
// `marks`, from sims.core.stream.Mark). Each is a dashed vertical rule with its label. Where the
// workload's marks crowd (a scan every 0.23 s over a 60 s axis) they become one thin band along
// the top edge (hundreds of ticks would comb the chart), labelled once per label with their
// count ("rule": "tick" in what drawMarks returns), and the recent window stays at the
// trend's width; zoomed in until they are apart,
// they are full rules and the recent window fits between two of them, so each phase shows.

const FONT = "11px system-ui, sans-serif";
export const MARK_GAP = 16; // CSS px per workload mark below which their rules become ticks

/** The workload marks within [lo, hi], and whether they crowd a plot `widthPx` CSS px wide. */
function inRange(marks, lo, hi, widthPx) {
  const w = marks.filter((m) => m.kind === "workload" && m.t >= lo && m.t <= hi);
  return { w, crowded: w.length > widthPx / MARK_GAP };
}

/**
 * Seconds of the recent window for a view of [lo, hi]: a twentieth of it, but when the workload's
 * marks in view are apart, at most half the median gap between them (a window as long as a phase
 * would average every phase away); never under three sample steps.
 */
export function recentWindow(marks, lo, hi, widthPx, step) {
  let win = (hi - lo) / 20;
  const { w, crowded } = inRange(marks, lo, hi, widthPx);
  if (w.length > 1 && !crowded) {
    const gaps = w
      .slice(1)
      .map((m, i) => m.t - w[i].t)
      .sort((a, b) => a - b);
    win = Math.min(win, gaps[Math.floor(gaps.length / 2)] / 2);
  }
  return Math.max(win, 3 * step);
}

/**
 * Draw `marks` ({t, label, kind}) on uPlot `u`'s canvas; a label only where it does not run into
 * the previous one on its row (events on two rows, workload marks on two more). Returns what was
 * drawn: [{t, label, kind, rule: "full" | "tick", labelled}].
 */
export function drawMarks(u, ctx, dpr, marks, fg) {
  const { left, top, width, height } = u.bbox;
  ctx.font = FONT.replace("11px", `${Math.round(10 * dpr)}px`);
  ctx.textBaseline = "top";
  ctx.textAlign = "left";
  const inView = marks
    .map((m) => ({ ...m, x: u.valToPos(m.t, "x", true) }))
    .filter((m) => m.x >= left - 1 && m.x <= left + width + 1)
    .sort((a, b) => a.x - b.x);
  const workload = inView.filter((m) => m.kind === "workload");
  const crowded = workload.length > width / (MARK_GAP * dpr);
  const counts = new Map();
  for (const m of workload) counts.set(m.label, (counts.get(m.label) || 0) + 1);
  const named = new Set(); // crowded: each label once, on its first mark, with its count
  const lastLabel = [-Infinity, -Infinity, -Infinity, -Infinity]; // right edge of the last label per row
  const drawn = [];
  let row = 0;
  for (const m of inView) {
    const tick = crowded && m.kind === "workload";
    ctx.strokeStyle = fg;
    ctx.globalAlpha = tick ? 0.4 : 0.55;
    ctx.setLineDash(tick ? [] : [3 * dpr, 3 * dpr]);
    ctx.lineWidth = dpr;
    if (!tick) {
      // crowded marks get no stroke each (hundreds would comb the chart): one band below, per label
      ctx.beginPath();
      ctx.moveTo(m.x, top);
      ctx.lineTo(m.x, top + height);
      ctx.stroke();
    }
    const short = m.label.length > 26 ? `${m.label.slice(0, 25)}…` : m.label;
    const text = tick ? `${short} ×${counts.get(m.label)}` : short;
    const tw = ctx.measureText(text).width;
    const tx = m.x + 3 * dpr + tw > left + width ? m.x - 3 * dpr - tw : m.x + 3 * dpr;
    // events cycle through rows 0 and 1; a workload mark takes row 2, or row 3 when 2 is taken
    const rows = m.kind === "workload" ? (tick ? [2] : [2, 3]) : [row++ % 2];
    const r = rows.find((k) => tx > lastLabel[k] + 6 * dpr) ?? rows[0];
    const labelled = tx > lastLabel[r] + 6 * dpr && !(tick && named.has(m.label));
    if (tick && labelled) named.add(m.label);
    if (labelled) {
      ctx.globalAlpha = 0.9;
      ctx.fillStyle = fg;
      ctx.fillText(text, tx, top + (tick ? 8 : 2) * dpr + r * 12 * dpr);
      lastLabel[r] = tx + tw;
    }
    drawn.push({ t: m.t, label: m.label, kind: m.kind, rule: tick ? "tick" : "full", labelled });
  }
  // crowded workload marks: a thin band along the top from the first to the last of each label
  const spans = new Map();
  for (const m of workload) {
    if (!crowded) break;
    const [a, b] = spans.get(m.label) || [m.x, m.x];
    spans.set(m.label, [Math.min(a, m.x), Math.max(b, m.x)]);
  }
  ctx.fillStyle = fg;
  ctx.globalAlpha = 0.25;
  for (const [a, b] of spans.values()) ctx.fillRect(a, top, Math.max(dpr, b - a), 4 * dpr);
  ctx.setLineDash([]);
  ctx.globalAlpha = 1;
  return drawn;
}
