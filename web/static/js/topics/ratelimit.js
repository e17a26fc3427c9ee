// Renderers of topic `ratelimit`'s view kinds (sims/ratelimit/topic.toml `views`), loaded by render.js's
// loadTopic("ratelimit") when a preset of the topic is shown.
import { registerRenderer, fmt, CAP_KEYS, FILL_KEYS } from "../render.js";
import { PAD, text, meter, outcomes, markNote } from "../draw.js";

// rate limiters: the bucket or window fill against its capacity, then recent decisions
registerRenderer("limiter", (ctx, view, box, theme) => {
  const st = view.state || {};
  const cap = CAP_KEYS.map((k) => st[k]).find((v) => typeof v === "number") || 1;
  const fillKey = FILL_KEYS.find((k) => typeof st[k] === "number");
  const fill = fillKey ? st[fillKey] : 0;
  const pad = 8;
  text(ctx, `${fillKey || "state"} ${fmt(fill)} / ${fmt(cap)}`, pad, 12, theme.fg);
  if (typeof st.prev === "number") text(ctx, `previous window ${fmt(st.prev)}`, box.w - pad, 12, theme.muted, "right");
  meter(ctx, pad, 22, box.w - 2 * pad, 14, fill / cap, theme.accent, theme);
  // recent decisions on a time strip: admitted up, rejected down
  const recent = view.recent || [];
  const top = 48;
  const h = box.h - top - 18;
  if (!recent.length || h < 10) {
    text(ctx, "no requests yet", pad, top + 10, theme.muted);
    return;
  }
  const t1 = recent[recent.length - 1][0];
  const t0 = Math.min(recent[0][0], t1 - 1);
  const span = Math.max(t1 - t0, 1e-9);
  const mid = top + h / 2;
  const x0 = pad + 62; // room for the row labels
  ctx.fillStyle = theme.track;
  ctx.fillRect(x0, mid, box.w - x0 - pad, 1);
  for (const [t, ok] of recent) {
    const x = x0 + ((t - t0) / span) * (box.w - x0 - pad - 4);
    ctx.fillStyle = ok ? theme.good : theme.bad;
    if (ok) ctx.fillRect(x, mid - h / 2 + 2, 3, h / 2 - 3);
    else ctx.fillRect(x, mid + 2, 3, h / 2 - 3);
  }
  text(ctx, "admitted", pad, mid - h / 4, theme.good);
  text(ctx, "rejected", pad, mid + h / 4, theme.bad);
  const last = `last ${fmt(span)} s`;
  text(ctx, last, box.w - pad, box.h - 8, theme.muted, "right");
  markNote(ctx, theme, pad, box.h - 8, "left", box.w - 3 * pad - ctx.measureText(last).width); // the latest burst
});

// rate limiting by tokens per minute: the counter against the limit, actual use beside it
registerRenderer("tpm", (ctx, v, box, theme) => {
  const limit = v.limit || 1;
  text(ctx, `counted ${fmt(v.counter ?? 0)} / ${fmt(limit)}`, PAD, 10, theme.fg);
  meter(ctx, PAD, 20, box.w - 2 * PAD, 14, (v.counter ?? 0) / limit, theme.accent, theme);
  text(ctx, `actually used ${fmt(v.actual ?? 0)}`, PAD, 48, theme.fg);
  meter(ctx, PAD, 58, box.w - 2 * PAD, 14, (v.actual ?? 0) / limit, theme.good, theme);
  text(ctx, `in flight ${fmt(v.in_flight ?? 0)} · waiting ${fmt(v.waiting ?? 0)} · rpm ${fmt(v.rpm ?? 0)}`, PAD, 88, theme.muted);
  text(ctx, "recent requests: ok / 429", PAD, box.h - 20, theme.muted);
  outcomes(ctx, v.recent || [], box.h - 12, 8, box, theme, (r) => r[1] === "ok" || r[1] === true);
});
