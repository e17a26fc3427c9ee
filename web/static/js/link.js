// The URL codec: a simulation's link state <-> text, for the page's hash (play.js), the embed's
// "open in playground" link and the element's attributes. A copied link reproduces the exact
// moment: seed, speed, t, panels, parameter overrides and the injected actions.

/** Virtual times in links (t and action times) are kept to the millisecond. */
export const TIME_RESOLUTION = 0.001;
export const roundTime = (t) => Math.round(t / TIME_RESOLUTION) * TIME_RESOLUTION;
/** The first time at or after `t` on the link's grid (an action is injected there). */
export const ceilTime = (t) => Number((Math.ceil(t / TIME_RESOLUTION - 1e-9) * TIME_RESOLUTION).toFixed(3));

/** An override's value as text: numbers and strings as they are, lists and tables (a found
 * workload, docs/search.md) as JSON. */
const valueText = (v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v));

function parseValue(v) {
  if (v.startsWith("{") || v.startsWith("[")) {
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }
  return v !== "" && !Number.isNaN(Number(v)) ? Number(v) : v;
}

/** "workload.rate=5;defaults.size=50;workload={...}" <-> {"workload.rate": 5, ...} */
export function parseOverrides(text) {
  const out = {};
  for (const part of (text || "").split(";")) {
    const i = part.indexOf("=");
    if (i <= 0) continue;
    out[part.slice(0, i).trim()] = parseValue(part.slice(i + 1).trim());
  }
  return out;
}

export const formatOverrides = (o) =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${valueText(v)}`)
    .join(";");

/**
 * "0@5.2,1@7,c2@8" <-> [[0, 5.2], [1, 7], ["c2", 8]] (a preset's action index, or a drawn fault's
 * key (faults.js; the worker checks it), @ virtual time, in injection order)
 */
export const parseActions = (text) =>
  (text || "")
    .split(",")
    .filter((s) => s.includes("@"))
    .map((s) => s.split("@"))
    .map(([i, t]) => [/^\d+$/.test(i) ? Number(i) : i, Number(t)])
    .filter(([i, t]) => (Number.isInteger(i) || /^[a-z][0-9.-]*$/.test(i)) && Number.isFinite(t));

export const formatActions = (a) => a.map(([i, t]) => `${i}@${Number(t.toFixed(3))}`).join(",");

/** "lru, arc" -> ["lru", "arc"] */
export const parsePanels = (text) =>
  (text || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The hash of a link to `state` ({seed, speed, t, panels, defaultPanels, overrides, actions, edits}):
 * seed=7&speed=2&t=12.5[&panels=lru,arc][&o.KEY=V...][&actions=0@12.5][&edit.BASE=CODE...]; panels
 * only when they differ from the page's default choice; CODE is an edited policy's source,
 * compressed (edits.js).
 */
export function linkHash(state) {
  const h = new URLSearchParams();
  h.set("seed", String(state.seed));
  h.set("speed", String(Math.round(state.speed * 100) / 100));
  h.set("t", String(Number(roundTime(state.t).toFixed(3))));
  if (state.panels.join(",") !== (state.defaultPanels || []).join(",")) h.set("panels", state.panels.join(","));
  for (const [k, v] of Object.entries(state.overrides)) h.set(`o.${k}`, valueText(v));
  if (state.actions.length) h.set("actions", formatActions(state.actions));
  for (const e of state.edits || []) h.set(`edit.${e.base}`, e.code);
  return h.toString().replaceAll("%2C", ",").replaceAll("%40", "@");
}
