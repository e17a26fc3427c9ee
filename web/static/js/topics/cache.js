// Renderers of topic `cache`'s view kinds (sims/cache/topic.toml `views`), loaded by render.js's
// loadTopic("cache") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text } from "../draw.js";

// cache: each list as a row of cells (ghost lists faded), with its size
registerRenderer("cache", (ctx, v, box, theme) => {
  const lists = v.lists || [];
  text(ctx, `${fmt(v.resident ?? 0)} / ${fmt(v.capacity ?? 0)} resident`, PAD, 9, theme.muted);
  if (v.p !== undefined) text(ctx, `p = ${fmt(v.p)}`, box.w - PAD, 9, theme.muted, "right");
  const rowH = Math.max(18, Math.min(34, (box.h - 20) / Math.max(1, lists.length)));
  lists.forEach((l, i) => {
    const y = 20 + i * rowH;
    text(ctx, `${l.name} ${fmt(l.size ?? (l.items || []).length)}${l.ghost ? " (ghost)" : ""}`, PAD, y + 5, theme.fg);
    const items = l.items || [];
    const n = items.length;
    if (!n) return;
    const w = (box.w - 2 * PAD) / Math.max(n, 24);
    ctx.globalAlpha = l.ghost ? 0.35 : 1;
    items.forEach((key, k) => {
      ctx.fillStyle = theme.palette[Math.abs(Number(key) || k) % theme.palette.length];
      ctx.fillRect(PAD + k * w, y + 11, Math.max(1, w - 0.5), rowH - 15);
    });
    ctx.globalAlpha = 1;
  });
});
