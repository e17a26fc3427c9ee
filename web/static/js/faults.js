// Faults the reader draws on a node view (topics consensus and replication): drag a line across
// the servers to cut the network there (the servers on one side of the line from those on the
// other), click a server to crash it and again to restart it, "Heal" to join everything again.
// Each becomes a key the worker injects like a "break it" action and the link records
// (web/pyodide/ops_faults.py): "p0.1-2.3.4" (a partition), "c2" / "r2" (crash / restart), "h".
// A renderer calls nodeTargets(ctx, targets, radius) after drawing; the rest happens here.

import { HEAL } from "./action-label.js";

export { HEAL, actionLabel } from "./action-label.js";

const DRAG_PX = 12; // a press that moves further than this draws a line; less is a click
/** The key that crashes server `id` (or restarts it when it is down). */
export const crashKey = (id, up) => `${up ? "c" : "r"}${id}`;

/** Which side of the line through a and b point p is on: 1 or -1 (0 on it). */
export const sideOf = (p, a, b) => Math.sign((b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x));

/**
 * The partition key of the line through a and b over `targets` ([{id, x, y}]): the servers on one
 * side against the rest (one on the line goes with the rest), or null when one side is empty.
 */
export function partitionKey(targets, a, b) {
  const one = targets.filter((t) => sideOf(t, a, b) > 0).map((t) => t.id);
  const other = targets.filter((t) => sideOf(t, a, b) <= 0).map((t) => t.id);
  if (!one.length || !other.length) return null;
  const [first, second] = one.includes(0) ? [one, other] : [other, one];
  return `p${first.join(".")}-${second.join(".")}`;
}

/** The server under point p, or -1. */
export function hitNode(targets, radius, p) {
  const t = targets.find((n) => Math.hypot(n.x - p.x, n.y - p.y) <= radius + 4);
  return t ? t.id : -1;
}

/** The simulation element a canvas belongs to (through an embed's shadow root too). */
function simOf(canvas) {
  for (let n = canvas; n; n = n.parentNode || n.host) if (typeof n.inject === "function") return n;
  return null;
}

/**
 * Where a renderer drew the servers on this canvas (CSS pixels; targets: [{id, x, y, up}]): clicks
 * and drags are hit-tested against them. Draws the line being dragged, if any.
 */
export function nodeTargets(ctx, targets, radius, theme) {
  const canvas = ctx.canvas;
  if (!canvas || typeof canvas.addEventListener !== "function") return; // a renderer test's fake canvas
  canvas.csTargets = targets;
  canvas.csRadius = radius;
  if (!canvas.csFaults) attach(canvas);
  const line = canvas.csDrag;
  if (!line) return;
  ctx.save();
  ctx.strokeStyle = theme.bad;
  ctx.lineWidth = 2;
  ctx.setLineDash([2, 3]);
  ctx.beginPath();
  ctx.moveTo(line[0].x, line[0].y);
  ctx.lineTo(line[1].x, line[1].y);
  ctx.stroke();
  ctx.restore();
}

function attach(canvas) {
  canvas.csFaults = true;
  const sim = simOf(canvas);
  if (!sim || typeof sim.inject !== "function" || sim.getAttribute("controls") === "basic" || sim.getAttribute("knob")) return;
  canvas.dataset.faults = "draw";
  // a view the reader draws on needs room: the servers get a taller canvas (sim.css; the
  // element's ResizeObserver redraws at the new size)
  canvas.style.touchAction = "none";
  canvas.style.cursor = "crosshair";
  canvas.setAttribute("aria-label", `${canvas.getAttribute("aria-label") || ""}; drag a line to partition, click a server to crash it`);
  // say on the page what the servers take, and offer one "heal" (it joins drawn partitions and
  // the preset's own alike, so the preset's "Heal the partition" button goes)
  const extras = sim.root?.querySelector?.(".cs-extras");
  if (extras && !extras.querySelector(".cs-heal")) {
    sim.meta?.actions?.forEach((a, i) => {
      if (a.event?.kind === "fault" && a.event?.fault === "heal") extras.querySelector(`[data-action="${i}"]`)?.remove();
    });
    const hint = document.createElement("span");
    hint.className = "cs-hint";
    hint.textContent = "Draw on the servers: drag a line across them to cut the network there; click one to crash or restart it.";
    const heal = document.createElement("button");
    heal.type = "button";
    heal.className = "cs-btn cs-break cs-heal";
    heal.textContent = "⚡ Heal the network";
    heal.setAttribute("aria-label", "Break it: heal every partition");
    heal.onclick = () => sim.inject(HEAL).catch(() => {});
    extras.append(heal, hint);
  }
  let start = null;
  const at = (e) => {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  const far = (a, b) => Math.hypot(a.x - b.x, a.y - b.y) > DRAG_PX;
  canvas.addEventListener("pointerdown", (e) => {
    start = at(e);
    canvas.setPointerCapture?.(e.pointerId);
  });
  canvas.addEventListener("pointermove", (e) => {
    if (!start) return;
    const p = at(e);
    if (!far(start, p)) return;
    canvas.csDrag = [start, p];
    sim._scheduleRender?.();
  });
  const end = (e, cancelled) => {
    if (!start) return;
    const a = start;
    const b = at(e);
    start = null;
    canvas.csDrag = null;
    sim._scheduleRender?.();
    if (cancelled) return;
    const targets = canvas.csTargets || [];
    let key = null;
    if (far(a, b)) key = partitionKey(targets, a, b);
    else {
      const id = hitNode(targets, canvas.csRadius || 10, b);
      if (id >= 0) key = crashKey(id, targets.find((t) => t.id === id).up);
    }
    if (key) sim.inject(key).catch(() => {});
  };
  canvas.addEventListener("pointerup", (e) => end(e, false));
  canvas.addEventListener("pointercancel", (e) => end(e, true));
}
