// Drawing helpers the topics' renderers (js/topics/*.js) share. Each draws into {w, h} CSS pixels;
// anything missing from a view is skipped rather than fatal (drawView falls back).
import { fmt } from "./render.js";

export const PAD = 8;

export function text(ctx, s, x, y, color, align = "left") {
  ctx.fillStyle = color;
  ctx.textAlign = align;
  ctx.fillText(s, x, y);
}

export function meter(ctx, x, y, w, h, frac, color, theme) {
  ctx.fillStyle = theme.track;
  ctx.fillRect(x, y, w, h);
  ctx.fillStyle = color;
  ctx.fillRect(x, y, Math.max(0, Math.min(1, frac || 0)) * w, h);
}

/** A strip of recent outcomes, newest on the right: ok -> good, else bad. */
export function outcomes(ctx, items, y, h, box, theme, isOk) {
  const n = items.length;
  if (!n) return;
  const w = Math.max(2, Math.min(10, (box.w - 2 * PAD) / n));
  const x0 = box.w - PAD - n * w;
  items.forEach((it, i) => {
    ctx.fillStyle = isOk(it) ? theme.good : theme.bad;
    ctx.fillRect(x0 + i * w, y, Math.max(1, w - 1), h);
  });
}

/** Bars of `value(item)`, scaled to `max` when given (one scale across compared panels). */
export function bars(ctx, items, value, label, box, theme, y0, color = theme.accent, max = 0) {
  const n = items.length;
  if (!n) return;
  const h = box.h - y0 - 16;
  const w = (box.w - 2 * PAD) / n;
  const mx = Math.max(1e-9, max, ...items.map(value));
  items.forEach((it, i) => {
    const v = value(it);
    const bh = (v / mx) * (h - 12);
    ctx.fillStyle = it.alive === false ? theme.bad : typeof color === "function" ? color(it, i) : color;
    ctx.fillRect(PAD + i * w + 1, y0 + h - bh, Math.max(1, w - 2), bh);
    if (w > 30) text(ctx, fmt(v), PAD + i * w + w / 2, y0 + h - bh - 6, theme.fg, "center");
    if (w > 18) text(ctx, label(it, i), PAD + i * w + w / 2, box.h - 7, theme.muted, "center");
    if (it.alive === false) {
      // a dead server: a cross where its bar would be, and the word
      ctx.strokeStyle = theme.bad;
      ctx.lineWidth = 2;
      const cx = PAD + i * w + w / 2;
      const cy = y0 + h - 10;
      ctx.beginPath();
      ctx.moveTo(cx - 5, cy - 5);
      ctx.lineTo(cx + 5, cy + 5);
      ctx.moveTo(cx + 5, cy - 5);
      ctx.lineTo(cx - 5, cy + 5);
      ctx.stroke();
      if (w > 26) text(ctx, "down", cx, cy - 14, theme.bad, "center");
    }
  });
}

/**
 * The workload's latest mark at or before the frame's time (theme.marks, theme.t: a scan starts,
 * the working set moves), or null. Binary search: cache-scan has hundreds.
 */
export function lastMark(theme) {
  const marks = theme.marks || [];
  let lo = 0;
  let hi = marks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (marks[mid].t <= theme.t) lo = mid + 1;
    else hi = mid;
  }
  return lo ? marks[lo - 1] : null;
}

/**
 * "scan starts, 0.04 s ago" for the latest workload mark at (x, y), or just its label where the
 * whole does not fit in `room` CSS px, or nothing; nothing before the first mark.
 */
export function markNote(ctx, theme, x, y, align = "left", room = Infinity) {
  const m = lastMark(theme);
  if (!m) return;
  const ago = theme.t - m.t;
  fitText(ctx, [`${m.label}, ${ago < 1 ? ago.toFixed(2) : fmt(ago)} s ago`, m.label], x, y, theme.muted, align, room);
}

/**
 * Draw the first of `candidates` (longest first) that fits in `room` CSS px at (x, y); returns
 * its width, or 0 when none fits (nothing is drawn then).
 */
export function fitText(ctx, candidates, x, y, color, align = "left", room = Infinity) {
  const s = candidates.find((c) => c && ctx.measureText(c).width <= room);
  if (!s) return 0;
  text(ctx, s, x, y, color, align);
  return ctx.measureText(s).width;
}

/** `s` broken at spaces into lines at most `width` CSS px wide under the context's font; a word
 * wider than that stays whole on its line. Continuation lines start with `indent`. */
export function wrapLines(ctx, s, width, indent = "") {
  const lines = [];
  const lead = String(s).match(/^ */)[0]; // leading spaces (code's indentation) stay
  let line = lead;
  for (const word of String(s).slice(lead.length).split(" ")) {
    const next = line.trim() ? `${line} ${word}` : line + word;
    if (line.trim() && ctx.measureText(next).width > width) {
      lines.push(line);
      line = indent + word;
    } else line = next;
  }
  if (line.trim()) lines.push(line);
  return lines;
}

/**
 * The boxes taken on a canvas this frame, so labels go where nothing else is: `place` draws a
 * text at the first of its candidate spots that lies inside the box ({w, h}: its right and bottom
 * edges; left and top, 0 unless given) and clear of every box taken so far, and takes it; `take`
 * marks a shape (a node, a bar) as taken.
 */
export class LabelSpace {
  constructor(box, margin = 1) {
    this.box = box;
    this.margin = margin;
    this.taken = [];
  }

  take(x0, y0, x1, y1) {
    this.taken.push([x0, y0, x1, y1]);
  }

  /** The box of `s` drawn at (x, y) with `align` under the context's font and baseline. */
  static boxOf(ctx, s, x, y, align) {
    const m = ctx.measureText(s);
    const x0 = align === "center" ? x - m.width / 2 : align === "right" ? x - m.width : x;
    return [x0, y - m.actualBoundingBoxAscent, x0 + m.width, y + m.actualBoundingBoxDescent];
  }

  free([x0, y0, x1, y1]) {
    const { w, h, left = 0, top = 0 } = this.box;
    const g = this.margin;
    if (x0 < left || y0 < top || x1 > w || y1 > h) return false;
    return this.taken.every(([a0, b0, a1, b1]) => x1 + g <= a0 || a1 + g <= x0 || y1 + g <= b0 || b1 + g <= y0);
  }

  /**
   * Draw the first (text, x, y) of `spots` ([[s, x, y], ...]) that is free, with `align`; a spot
   * that would leave the box sideways is slid back inside first. Returns whether one was drawn.
   */
  place(ctx, spots, color, align = "center") {
    for (const [s, x, y] of spots) {
      if (!s) continue;
      let b = LabelSpace.boxOf(ctx, s, x, y, align);
      const left = this.box.left || 0;
      const shift = b[0] < left ? left - b[0] : b[2] > this.box.w ? this.box.w - b[2] : 0;
      b = [b[0] + shift, b[1], b[2] + shift, b[3]];
      if (!this.free(b)) continue;
      text(ctx, s, x + shift, y, color, align);
      this.taken.push(b);
      return true;
    }
    return false;
  }
}

/** Outline a cell whose key the page marks (theme.marked: the keys a divergence moved). */
export function markCell(ctx, key, x, y, w, h, theme) {
  if (!theme.marked?.has(String(key))) return;
  ctx.save();
  ctx.strokeStyle = theme.fg;
  ctx.lineWidth = 2;
  ctx.strokeRect(x - 2, y - 3, Math.max(3, w) + 4, h + 6);
  ctx.restore();
}
