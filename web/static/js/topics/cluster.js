// Renderers of topic `cluster`'s view kinds (sims/cluster/topic.toml `views`), loaded by render.js's
// loadTopic("cluster") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text } from "../draw.js";

// cluster routing: per replica, its load and its prefix-cache occupancy
registerRenderer("cluster", (ctx, v, box, theme) => {
  const reps = v.replicas || [];
  text(ctx, `router ${v.router || ""}`, PAD, 9, theme.muted);
  const n = reps.length || 1;
  const w = (box.w - 2 * PAD) / n;
  const h = box.h - 40;
  const num = (r, keys) => keys.map((k) => r[k]).find((x) => typeof x === "number") ?? 0;
  const loads = reps.map((r) => num(r, ["queue", "waiting", "load", "num_waiting", "running", "active"]));
  const mx = Math.max(1e-9, ...loads);
  reps.forEach((r, i) => {
    const x = PAD + i * w;
    const kv = num(r, ["kv_usage", "kv_utilization", "cache_usage"]);
    ctx.fillStyle = theme.track;
    ctx.fillRect(x + 1, 18, Math.max(1, w - 2), h);
    ctx.fillStyle = theme.palette[i % theme.palette.length];
    ctx.globalAlpha = 0.35;
    ctx.fillRect(x + 1, 18 + h * (1 - Math.min(1, kv)), Math.max(1, w - 2), h * Math.min(1, kv));
    ctx.globalAlpha = 1;
    const lh = (loads[i] / mx) * h;
    ctx.fillRect(x + w * 0.3, 18 + h - lh, Math.max(1, w * 0.4), lh);
    if (w > 18) text(ctx, fmt(loads[i]), x + w / 2, box.h - 12, theme.fg, "center");
  });
});
