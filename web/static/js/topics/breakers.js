// Renderers of topic `breakers`'s view kinds (sims/breakers/topic.toml `views`), loaded by
// render.js's loadTopic("breakers") when a preset of the topic is shown.
import { registerRenderer, fmt } from "../render.js";
import { PAD, text, markNote } from "../draw.js";

const WORD = { closed: "closed", open: "open", half_open: "half-open", throttling: "throttling" };

// A state's colour on the breaker's band: closed calm, open bad, half-open the accent, throttling
// bad with the rejection probability as its strength.
function stateStyle(state, level, theme) {
  if (state === "open") return [theme.bad, 0.9];
  if (state === "half_open") return [theme.accent, 0.9];
  if (state === "throttling") return [theme.bad, 0.2 + 0.7 * Math.max(0, Math.min(1, level))];
  return [theme.good, 0.35];
}

// The backend's health as a colour, a strength and a short word: down, errors, capped, slow.
function healthStyle([, errors, latency, capacity, fault], theme) {
  if (errors >= 1) return [theme.bad, 0.9, "down"];
  if (capacity > 0) return [theme.bad, 0.55, `${fmt(capacity)}/s max`];
  if (errors > 0) return [theme.bad, 0.25 + 0.6 * errors, `${Math.round(errors * 100)}% errors`];
  if (fault) return [theme.accent, 0.7, `slow ${fmt(latency)} s`];
  return [theme.good, 0.35, "healthy"];
}

// The line above the bands: the state, then what the breaker is counting (dropped when narrow).
function headline(v) {
  const w = v.window || {};
  let detail = "";
  if (v.state === "open" && typeof v.until === "number") detail = `half-open in ${fmt(Math.max(0, v.until - v.t))} s`;
  else if (v.state === "half_open") detail = `${v.trials - v.trials_left}/${v.trials} trials out`;
  else if (typeof w.requests === "number") detail = `refuses ${Math.round((v.level || 0) * 100)}% · ${w.accepts}/${w.requests} accepted`;
  else if (typeof w.run === "number") detail = `${w.run} failed in a row (trips past ${w.max_failures})`;
  else if (typeof w.calls === "number") {
    detail = `${w.failures}/${w.calls} failed`;
    if (w.slow_rate < 100 && typeof w.slow === "number") detail += ` · ${w.slow} slow`;
  }
  const word = Object.keys(w).length ? WORD[v.state] || v.state : "no breaker";
  return [word, detail];
}

// breaker: the breaker's state over the last `span` seconds, the outcome of every call per slot
// below it (ok, slow, failed, refused fast) and the backend's health underneath, on one time axis
registerRenderer("breaker", (ctx, v, box, theme) => {
  const span = v.span || 40;
  const now = v.t || 0;
  const t0 = Math.max(0, now - span); // the axis fills from the left, then scrolls
  const gutter = box.w >= 320 ? 58 : 0; // lane labels where the panel is wide enough
  const x0 = PAD + gutter;
  const x1 = box.w - PAD;
  const xt = (t) => x0 + ((Math.max(t, t0) - t0) / span) * (x1 - x0);
  const small = box.h < 140;
  const bandH = small ? 12 : 14;
  const yBand = 18;
  const yHealth = box.h - 16 - bandH - 4;
  const yBars = yBand + bandH + 6;
  const barsH = Math.max(10, yHealth - 6 - yBars);

  // headline: the state word in its colour, the detail after it while it fits
  const [word, detail] = headline(v);
  const [colour] = stateStyle(v.state, v.level, theme);
  ctx.font = `bold 12px ${theme.font}`;
  text(ctx, word, PAD, 9, v.state === "closed" ? theme.fg : colour);
  const ww = ctx.measureText(word).width;
  ctx.font = `12px ${theme.font}`;
  if (detail && ctx.measureText(detail).width <= box.w - 2 * PAD - ww - 8) text(ctx, detail, PAD + ww + 8, 9, theme.muted);

  // the breaker's band
  const bands = v.bands || [];
  bands.forEach(([t, state, level], i) => {
    const end = i + 1 < bands.length ? bands[i + 1][0] : now;
    if (end <= t0) return;
    const [c, a] = stateStyle(state, level, theme);
    ctx.globalAlpha = a;
    ctx.fillStyle = c;
    ctx.fillRect(xt(t), yBand, Math.max(1, xt(end) - xt(t)), bandH);
  });
  ctx.globalAlpha = 1;

  // calls per slot, stacked: ok, slow, failed, refused
  const slots = v.slots || [];
  const dt = v.slot || 0.5;
  const colours = [theme.good, theme.accent, theme.bad, theme.muted];
  const total = (s) => s[1] + s[2] + s[3] + s[4];
  const most = Math.max(1, ...slots.map(total));
  const w = Math.max(1, ((x1 - x0) * dt) / span - 1);
  for (const s of slots) {
    const x = xt(s[0] * dt);
    let y = yBars + barsH;
    [s[1], s[3], s[2], s[4]].forEach((n, j) => {
      if (!n) return;
      const h = (n / most) * barsH;
      ctx.fillStyle = colours[j];
      ctx.fillRect(x, y - h, w, h);
      y -= h;
    });
  }
  ctx.fillStyle = theme.track;
  ctx.fillRect(x0, yBars + barsH, x1 - x0, 1);

  // the backend's health, named inside its segments where the word fits
  const health = v.health || [];
  health.forEach((hs, i) => {
    const end = i + 1 < health.length ? health[i + 1][0] : now;
    if (end <= t0 || hs[0] > now) return;
    const [c, a, label] = healthStyle(hs, theme);
    const xa = xt(hs[0]);
    const xb = xt(end);
    ctx.globalAlpha = a;
    ctx.fillStyle = c;
    ctx.fillRect(xa, yHealth, Math.max(1, xb - xa), bandH);
    ctx.globalAlpha = 1;
    if (ctx.measureText(label).width + 6 <= xb - xa) text(ctx, label, xa + 3, yHealth + bandH / 2 + 1, theme.fg);
  });

  if (gutter) {
    text(ctx, "breaker", PAD, yBand + bandH / 2 + 1, theme.muted);
    text(ctx, "calls", PAD, yBars + barsH / 2, theme.muted);
    text(ctx, "backend", PAD, yHealth + bandH / 2 + 1, theme.muted);
  }

  // bottom line: the axis's span and a legend of the bars, then the latest mark where room is left
  const yText = box.h - 6;
  const axis = `last ${fmt(span)} s`;
  text(ctx, axis, x1, yText, theme.muted, "right");
  let x = PAD;
  const room = x1 - ctx.measureText(axis).width - 10;
  const legend = [
    ["ok", theme.good],
    [`slow >${fmt(v.slow_mark || 1)}s`, theme.accent],
    ["failed", theme.bad],
    ["refused", theme.muted],
  ];
  if (legend.reduce((s, [l]) => s + ctx.measureText(l).width + 8, 0) <= room - PAD) {
    for (const [l, c] of legend) {
      text(ctx, l, x, yText, c);
      x += ctx.measureText(l).width + 8;
    }
  } else markNote(ctx, theme, PAD, yText, "left", room - PAD);
});
