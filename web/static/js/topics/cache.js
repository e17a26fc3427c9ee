// Renderers of topic `cache`'s view kinds (sims/cache/topic.toml `views`), loaded by render.js's
// loadTopic("cache") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, lastMark, markCell, markNote, text } from "../draw.js";

// cache: each list as a row of cells (ghost lists faded), with its size. When the workload has a
// hot set (hot_n keys numbered from 0, as scan_mix), hot keys are one colour and the rest another,
// so a scan flushing the hot set is visible; otherwise each key gets a stable colour. Under the
// lists, the workload's latest moment ("scan starts, 0.04 s ago").
registerRenderer("cache", (ctx, v, box, theme) => {
  const lists = v.lists || [];
  const head = `${fmt(v.resident ?? 0)} / ${fmt(v.capacity ?? 0)} resident`;
  text(ctx, head, PAD, 9, theme.muted);
  // ARC's p beside the header, or on the first list's line where the legend would run into it
  const pRoom = box.w - 2 * PAD - ctx.measureText(head).width - (theme.workload?.hot_n ? 110 : 0);
  const pAside = v.p !== undefined && pRoom >= 60;
  if (v.p !== undefined) text(ctx, `p = ${fmt(v.p)}`, box.w - PAD, pAside ? 9 : 25, theme.muted, "right");
  const hotN = theme.workload?.hot_n;
  const colour = hotN
    ? (key) => (Number(key) < hotN ? theme.accent : theme.bad)
    : (key, k) => theme.keys[Math.abs(Number(key) || k) % theme.keys.length];
  if (hotN) {
    text(ctx, "■ hot", box.w - PAD - (pAside ? 70 : 0) - 48, 9, theme.accent, "right");
    text(ctx, "■ other", box.w - PAD - (pAside ? 70 : 0), 9, theme.bad, "right");
  }
  const note = lastMark(theme) ? 14 : 0;
  const rowH = Math.max(18, Math.min(34, (box.h - 20 - note) / Math.max(1, lists.length)));
  lists.forEach((l, i) => {
    const y = 20 + i * rowH;
    text(ctx, `${l.name} ${fmt(l.size ?? (l.items || []).length)}${l.ghost ? " (ghost)" : ""}`, PAD, y + 5, theme.fg);
    const items = l.items || [];
    const n = items.length;
    if (!n) return;
    const w = (box.w - 2 * PAD) / Math.max(n, 24);
    ctx.globalAlpha = l.ghost ? 0.35 : 1;
    items.forEach((key, k) => {
      ctx.fillStyle = colour(key, k);
      ctx.fillRect(PAD + k * w, y + 11, Math.max(1, w - 0.5), rowH - 15);
    });
    ctx.globalAlpha = 1;
    items.forEach((key, k) => markCell(ctx, key, PAD + k * w, y + 11, w - 0.5, rowH - 15, theme));
  });
  markNote(ctx, theme, PAD, Math.min(box.h - 7, 20 + lists.length * rowH + 5), "left", box.w - 2 * PAD);
});
