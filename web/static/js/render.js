// Canvas renderers for panel views, keyed on view.kind; anything unrecognised gets the generic
// renderer (labelled bars for numbers, cells for lists), so a new preset never breaks the page.
// A renderer is (ctx, view, box, theme) -> void; box = {w, h} in CSS pixels. Each topic's
// renderers live in js/topics/TOPIC.js, loaded by name with loadTopic(TOPIC).

// the debug hook for tests (text-boxes.js): where every text drawn on a canvas goes
if (globalThis.contentionTextBoxes) (await import("./text-boxes.js")).recordTextBoxes(globalThis.contentionTextBoxes);

export const RENDERERS = Object.create(null);
const TOPICS = new Map(); // topic name -> Promise of its module (null when it has none)

/** Register a renderer for views whose `kind` is `kind` (a topic module registers its own). */
export function registerRenderer(kind, fn) {
  RENDERERS[kind] = fn;
}

/**
 * Load js/topics/TOPIC.js, which registers the renderers of the topic's view kinds. Resolves once
 * they are registered, or with null when the topic has no renderer (its views then draw with the
 * generic one); never rejects. `globalThis.contentionModuleUrls` maps "js/topics/TOPIC.js" to a URL
 * where modules are not served from static/ (the notebook widget links them as blob URLs).
 */
export function loadTopic(topic) {
  if (!/^[a-z][a-z0-9_]*$/.test(topic || "")) return Promise.resolve(null);
  if (!TOPICS.has(topic)) {
    const rel = `js/topics/${topic}.js`;
    const url = globalThis.contentionModuleUrls?.[rel] || new URL(`./topics/${topic}.js`, import.meta.url).href;
    TOPICS.set(
      topic,
      import(url).catch(() => null),
    );
  }
  return TOPICS.get(topic);
}

export function drawView(ctx, view, box, theme) {
  ctx.clearRect(0, 0, box.w, box.h);
  ctx.font = `12px ${theme.font}`;
  ctx.textBaseline = "middle";
  const fn = (view && RENDERERS[view.kind]) || drawGeneric;
  try {
    fn(ctx, view || {}, box, theme);
  } catch (err) {
    ctx.clearRect(0, 0, box.w, box.h);
    drawGeneric(ctx, view || {}, box, theme);
  }
}

// -- helpers ------------------------------------------------------------------------------------
export function fmt(v) {
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return Math.abs(v) >= 10000 ? v.toLocaleString("en-US") : String(v);
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toPrecision(3).replace(/\.?0+$/, "") || "0";
}

function label(ctx, text, x, y, theme, color = theme.muted, align = "left") {
  ctx.fillStyle = color;
  ctx.textAlign = align;
  ctx.fillText(text, x, y);
}

function bar(ctx, x, y, w, h, frac, color, theme) {
  ctx.fillStyle = theme.track;
  ctx.fillRect(x, y, w, h);
  ctx.fillStyle = color;
  ctx.fillRect(x, y, Math.max(0, Math.min(1, frac)) * w, h);
}

function cell(ctx, x, y, w, h, fill, text, theme, textColor = theme.onAccent) {
  ctx.fillStyle = fill;
  ctx.fillRect(x, y, w, h);
  if (text !== undefined && text !== null && w >= 14) {
    ctx.fillStyle = textColor;
    ctx.textAlign = "center";
    const s = String(text);
    ctx.fillText(s.length * 6.5 > w ? s.slice(0, Math.max(1, Math.floor(w / 6.5))) : s, x + w / 2, y + h / 2 + 0.5);
  }
}

export const CAP_KEYS = ["capacity", "limit", "size", "total", "frames", "slots", "max", "heap"];
export const FILL_KEYS = ["tokens", "queued", "count", "in_window", "used", "curr", "load", "level"];

registerRenderer("error", (ctx, view, box, theme) => {
  label(ctx, "view failed:", 8, 14, theme, theme.bad);
  label(ctx, String(view.error || "").slice(0, 80), 8, 32, theme, theme.fg);
});

// -- the generic renderer -------------------------------------------------------------------
function flatten(view) {
  // numbers (top level and one level down), lists of numbers, other lists
  const nums = [];
  const series = [];
  const lists = [];
  const walk = (obj, prefix, depth) => {
    for (const [k, v] of Object.entries(obj)) {
      if (k === "kind") continue;
      const name = prefix ? `${prefix}.${k}` : k;
      if (typeof v === "number") nums.push([name, v]);
      else if (typeof v === "boolean") nums.push([name, v ? 1 : 0]);
      else if (Array.isArray(v)) {
        if (v.length && v.every((x) => typeof x === "number")) series.push([name, v]);
        else lists.push([name, v]);
      } else if (v && typeof v === "object" && depth < 1) walk(v, name, depth + 1);
    }
  };
  walk(view, "", 0);
  return { nums, series, lists };
}

export function drawGeneric(ctx, view, box, theme) {
  const { nums, series, lists } = flatten(view);
  const pad = 8;
  let y = 6;
  const rowH = 16;
  const rows = Math.max(1, series.length + lists.length);
  const numRows = Math.min(nums.length, Math.max(2, Math.floor((box.h - 10 - rows * 34) / rowH)));
  // scalars as bars, scaled to a capacity-like sibling when there is one
  const capOf = (name) => {
    const base = name.includes(".") ? name.slice(0, name.lastIndexOf(".") + 1) : "";
    for (const k of CAP_KEYS) {
      const hit = nums.find(([n]) => n === base + k);
      if (hit && hit[1] > 0) return hit[1];
    }
    return null;
  };
  const maxAbs = Math.max(1e-12, ...nums.map(([, v]) => Math.abs(v)));
  for (const [name, v] of nums.slice(0, numRows)) {
    const cap = capOf(name);
    const frac = cap ? v / cap : Math.abs(v) / maxAbs;
    label(ctx, name, pad, y + 7, theme, theme.muted);
    bar(ctx, box.w * 0.42, y + 2, box.w * 0.38, 10, frac, theme.accent, theme);
    label(ctx, fmt(v), box.w - pad, y + 7, theme, theme.fg, "right");
    y += rowH;
  }
  // lists of numbers as bar charts (per replica, per slot...)
  for (const [name, arr] of series) {
    if (y + 30 > box.h) break;
    label(ctx, `${name} (${arr.length})`, pad, y + 7, theme, theme.muted);
    const n = Math.min(arr.length, Math.floor(box.w - 2 * pad));
    const w = (box.w - 2 * pad) / n;
    const mx = Math.max(1e-12, ...arr.slice(0, n).map(Math.abs));
    for (let i = 0; i < n; i++) {
      const hgt = (Math.abs(arr[i]) / mx) * 18;
      ctx.fillStyle = theme.accent;
      ctx.fillRect(pad + i * w, y + 32 - hgt, Math.max(1, w - 1), hgt);
    }
    y += 34;
  }
  // other lists as cells (cache contents, queues...)
  for (const [name, arr] of lists) {
    if (y + 30 > box.h) break;
    label(ctx, `${name} (${arr.length})`, pad, y + 7, theme, theme.muted);
    const n = Math.min(arr.length, 48);
    const w = Math.max(4, Math.min(28, (box.w - 2 * pad) / Math.max(n, 1)));
    for (let i = 0; i < n; i++) {
      const item = arr[i];
      const text = item === null || typeof item !== "object" ? item : Array.isArray(item) ? item[0] : Object.values(item)[0];
      cell(ctx, pad + i * w, y + 15, w - 1, 16, theme.keys[i % theme.keys.length], typeof text === "object" ? "" : text, theme);
    }
    y += 34;
  }
  if (!nums.length && !series.length && !lists.length) label(ctx, "(no state to draw)", pad, 14, theme);
}
