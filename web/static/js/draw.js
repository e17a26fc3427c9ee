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

export function bars(ctx, items, value, label, box, theme, y0, color = theme.accent) {
  const n = items.length;
  if (!n) return;
  const h = box.h - y0 - 16;
  const w = (box.w - 2 * PAD) / n;
  const mx = Math.max(1e-9, ...items.map(value));
  items.forEach((it, i) => {
    const v = value(it);
    const bh = (v / mx) * (h - 12);
    ctx.fillStyle = it.alive === false ? theme.bad : typeof color === "function" ? color(it, i) : color;
    ctx.fillRect(PAD + i * w + 1, y0 + h - bh, Math.max(1, w - 2), bh);
    if (w > 30) text(ctx, fmt(v), PAD + i * w + w / 2, y0 + h - bh - 6, theme.fg, "center");
    if (w > 18) text(ctx, label(it, i), PAD + i * w + w / 2, box.h - 7, theme.muted, "center");
  });
}
