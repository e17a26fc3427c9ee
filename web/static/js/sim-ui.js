// The element's DOM: controls, the panel picker, one figure per panel (canvas + metrics), the
// charts' host; and drawing a frame into them. Everything here reads the element's state and
// calls its public methods; no simulation logic lives here.
import { speedFromSlider } from "./driver.js";
import { drawView, fmt } from "./render.js";
import { formatMetric } from "./metrics.js";
import { KEY_COLORS } from "./palette.js";

const STATIC = new URL("../", import.meta.url);

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children);
  return e;
}

const speedText = (x) => `${x < 1 ? x.toFixed(2) : x.toFixed(1)}×`;

/** Show speed `x` on the speed slider. */
export function showSpeed(ui, x) {
  ui.speedOut.textContent = speedText(x);
  ui.speed.setAttribute("aria-valuetext", `${speedText(x)} real time`);
}

/** The watch-for text with the live parameter values: "100-object cache" follows the slider. */
export function watchText(meta, overrides) {
  if (overrides.workload && typeof overrides.workload === "object") {
    // a found workload (search.js) or one from a link replaces the generator the text is about
    return "this run plays a workload that replaces the preset's own generator (a search result or a link's), so the story above may not apply: compare the panels' numbers.";
  }
  let text = meta.watch_for || "";
  for (const c of meta.controls || []) {
    const was = meta.control_values?.[c.target];
    const now = overrides[c.target];
    if (now === undefined || was === undefined || now === was) continue;
    const re = new RegExp(`(^|[^\\d.])${String(was).replace(".", "\\.")}(?![\\d]|\\.\\d)`, "g");
    text = text.replace(re, `$1${fmt(now)}`);
  }
  return text;
}

/** Build the element's UI into `sim.root`; returns the `ui` record the element keeps. */
export function buildUI(sim) {
  const m = sim.meta;
  const full = sim.getAttribute("controls") !== "basic";
  if (sim.constructor.shadow) {
    for (const href of ["css/sim.css", "vendor/uplot/uPlot.min.css"])
      sim.root.append(el("link", { rel: "stylesheet", href: new URL(href, STATIC).href }));
  }
  const ui = { panels: {} };
  ui.play = el("button", {
    type: "button",
    class: "cs-btn cs-primary",
    onclick: () => (sim.clock.playing ? sim.pause() : sim.play()),
  });
  const stepBtn = el("button", {
    type: "button",
    class: "cs-btn",
    "aria-label": "Step to the next event",
    title: "Step (.)",
    text: "Step ›",
    onclick: () => sim.step().catch(() => {}),
  });
  const resetBtn = el("button", {
    type: "button",
    class: "cs-btn",
    "aria-label": "Reset to the start",
    title: "Reset",
    text: "↺ Reset",
    onclick: () => sim.seek(0).catch(() => {}),
  });
  ui.speed = el("input", {
    type: "range",
    min: "0",
    max: "1",
    step: "0.001",
    "aria-label": "Speed",
    oninput: (e) => sim.setSpeed(speedFromSlider(Number(e.target.value))),
  });
  ui.speedOut = el("output", { class: "cs-num" });
  ui.time = el("input", {
    type: "range",
    min: "0",
    max: String(m.duration),
    step: "any",
    value: "0",
    "aria-label": "Virtual time (drag to seek)",
    "aria-valuetext": `0 of ${fmt(m.duration)} seconds`,
    oninput: (e) => sim.seek(Number(e.target.value)).catch(() => {}),
    onpointerdown: () => (sim._dragging = true),
    onpointerup: () => (sim._dragging = false),
  });
  ui.timeOut = el("output", { class: "cs-num" });
  const bar = el(
    "div",
    { class: "cs-controls" },
    ui.play,
    stepBtn,
    resetBtn,
    el("label", { class: "cs-speed" }, el("span", { text: "Speed" }), ui.speed, ui.speedOut),
    el("label", { class: "cs-time" }, el("span", { text: "Time" }), ui.time, ui.timeOut),
  );
  ui.banner = el("p", { class: "cs-banner", role: "alert", hidden: true });
  ui.stepNote = el("p", { class: "cs-step-note", role: "status", "aria-live": "polite", hidden: true });
  const extras = el("div", { class: "cs-extras" });
  const knob = sim.getAttribute("knob"); // one control only (a figure in the prose)
  if (knob) {
    for (const c of (m.controls || []).filter((c) => c.target === knob)) extras.append(controlUI(sim, c));
  } else if (full) {
    for (const c of m.controls || []) extras.append(controlUI(sim, c));
    m.actions?.forEach((a, i) =>
      extras.append(
        el("button", {
          type: "button",
          class: "cs-btn cs-break",
          text: `⚡ ${a.label}`,
          "aria-label": `Break it: ${a.label}`,
          "data-action": String(i),
          onclick: () => sim.inject(i).catch(() => {}),
        }),
      ),
    );
  }
  ui.watch = el("span", { text: watchText(m, sim.overrides) });
  const watch =
    m.watch_for && sim.getAttribute("caption") !== "false"
      ? el("p", { class: "cs-watch" }, el("strong", { text: "Watch for: " }), ui.watch)
      : "";
  // the claim in this run's numbers (claim.js), loaded after first paint; a page that bundles its
  // modules (the notebook) goes without it
  import("./claim.js").then(
    (mod) => (ui.claim = mod),
    () => {},
  );
  const picker = el("div", { class: "cs-picker-slot" });
  // the panel picker (not in an embed, which shows what its writer chose), loaded after first paint
  if (full && !knob && !sim.constructor.shadow && m.panels.length > 2)
    import("./picker.js").then((mod) => picker.replaceWith(mod.panelPicker(sim)));
  const grid = el("div", { class: "cs-panels", "data-count": String(sim.panelNames.length), style: `--n:${sim.panelNames.length}` });
  sim.keyMetrics = new Set(m.key_metrics || []);
  for (const name of sim.panelNames) {
    const spec = m.panels.find((p) => p.name === name);
    const canvas = el("canvas", { role: "img", "aria-label": `${name}: state of the ${spec.policy} policy` });
    const metrics = el("dl", { class: "cs-metrics" });
    const moreList = el("dl", { class: "cs-metrics" });
    const more = el("details", { class: "cs-more", hidden: true }, el("summary", { text: "more metrics" }), moreList);
    const error = el("p", { class: "cs-panel-error", role: "alert", hidden: true });
    const fig = el(
      "figure",
      { class: "cs-panel", "data-panel": name, style: `--cs-panel-color:${sim.colorOf(name)}` },
      el(
        "figcaption",
        {},
        el("span", { class: "cs-swatch" }),
        el("b", { text: name }),
        spec.policy !== name ? el("small", { text: spec.policy }) : "",
      ),
      el("div", { class: "cs-canvas" }, canvas),
      error,
      metrics,
      more,
    );
    grid.append(fig);
    ui.panels[name] = { canvas, metrics, more, moreList, error, cells: {}, w: 0, h: 0 };
  }
  ui.chartHost = el("div", { class: "cs-charts" });
  // the picture first: the controls that drive it, the panels, then what to watch for in them
  ui.wrap = el(
    "div",
    { class: "cs", tabindex: "0", onkeydown: (e) => sim.handleKey(e) },
    ui.banner,
    bar,
    ui.stepNote,
    grid,
    watch,
    picker,
    extras,
    ui.chartHost,
  );
  sim.root.append(ui.wrap);
  return ui;
}

function controlUI(sim, c) {
  const [section, key] = c.target.split(".");
  const cur = sim.overrides[c.target] ?? sim.meta.control_values?.[c.target] ?? c.min;
  const out = el("output", { class: "cs-num", text: fmt(cur) });
  const input = el("input", {
    type: "range",
    min: String(c.min),
    max: String(c.max),
    step: String(c.step ?? (c.max - c.min) / 100),
    value: String(cur),
    "aria-label": c.label,
    "aria-valuetext": fmt(cur),
    "data-target": c.target,
    oninput: (e) => {
      out.textContent = fmt(Number(e.target.value));
      input.setAttribute("aria-valuetext", out.textContent);
    },
    // JSON keeps 40 an integer and 2.5 a float, which is what the preset's params check
    onchange: (e) => sim.retune({ ...sim.overrides, [c.target]: Number(e.target.value) }).catch(() => {}),
  });
  return el("label", { class: "cs-param", title: `${section}.${key}` }, el("span", { text: c.label }), input, out);
}

/** The colours and fonts the canvas renderers use, from the element's custom properties. */
export function readTheme(sim) {
  const cs = getComputedStyle(sim.ui.wrap);
  const v = (n, d) => cs.getPropertyValue(n).trim() || d;
  return {
    fg: v("--cs-fg", "#111"),
    muted: v("--cs-muted", "#666"),
    accent: v("--cs-accent", "#2563eb"),
    good: v("--cs-good", "#059669"),
    bad: v("--cs-bad", "#dc2626"),
    track: v("--cs-track", "rgba(128,128,128,.18)"),
    onAccent: v("--cs-on-accent", "#fff"),
    font: v("--cs-font", "system-ui, sans-serif"),
    palette: sim.colors,
    keys: KEY_COLORS,
    workload: sim.meta.workload || {},
  };
}

/**
 * Draw frame `f`: each panel's view and metrics. Metrics the claim or the charts name come first
 * (in that order), then the topic's key metrics; the rest fold under "more metrics".
 */
export function renderFrame(sim, f, theme, resized) {
  const ui = sim.ui;
  const dpr = window.devicePixelRatio || 1;
  const first = sim.firstMetrics();
  for (const name of sim.panelNames) {
    const p = ui.panels[name];
    const data = f.panels[name];
    if (!data) continue;
    const kind = data.view?.kind || "";
    if (p.canvas.parentElement.dataset.kind !== kind) {
      // a view kind may want another height (sim.css)
      p.canvas.parentElement.dataset.kind = kind;
      resized = true;
    }
    if (resized || !p.w) {
      const box = p.canvas.parentElement.getBoundingClientRect();
      p.w = Math.max(100, Math.floor(box.width));
      p.h = Math.max(80, Math.floor(box.height));
      p.canvas.width = p.w * dpr;
      p.canvas.height = p.h * dpr;
      p.canvas.style.width = `${p.w}px`;
      p.canvas.style.height = `${p.h}px`;
    }
    const ctx = p.canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const moment = { t: f.t, marks: sim.info?.marks || [] }; // the workload's marks, for the views (draw.js lastMark)
    drawView(ctx, data.view, { w: p.w, h: p.h }, { ...theme, ...moment, panel: name, color: sim.colorOf(name), marked: sim.marked });
    const names = [...first.filter((k) => k in data.metrics), ...Object.keys(data.metrics).filter((k) => !first.includes(k))];
    for (const k of names) {
      let cell = p.cells[k];
      if (!cell) {
        cell = p.cells[k] = el("dd");
        const key = first.includes(k) || !sim.keyMetrics.size || sim.keyMetrics.has(k);
        const row = el(
          "div",
          { class: first.includes(k) ? "cs-claim-metric" : null },
          el("dt", { text: k.replaceAll("_", " "), title: k }),
          cell,
        );
        (key ? p.metrics : p.moreList).append(row);
        if (!key) p.more.hidden = false;
      }
      const text = formatMetric(k, data.metrics[k], sim.meta.metrics);
      if (cell.textContent !== text) cell.textContent = text;
    }
  }
  ui.claim?.say(sim, f);
  if (!sim._dragging) ui.time.value = String(f.t);
  const shown = `${f.t.toFixed(1)} / ${fmt(sim.meta.duration)} s`;
  if (ui.timeOut.textContent !== shown) {
    ui.timeOut.textContent = shown;
    ui.time.setAttribute("aria-valuetext", `${f.t.toFixed(1)} of ${fmt(sim.meta.duration)} seconds`);
  }
}

/**
 * One scale for views that are compared: the largest value across the shown panels of each
 * numeric list in the views (`key`), of each numeric field of lists of records (`key.field`) and
 * of each column of lists of rows (`key.i`).
 */
export function sharedScales(f, panelNames) {
  const scales = {};
  if (!f) return scales;
  const top = (k, x) => {
    if (typeof x === "number" && Number.isFinite(x) && !(x <= (scales[k] ?? -Infinity))) scales[k] = x;
  };
  for (const n of panelNames) {
    const view = f.panels[n]?.view || {};
    for (const [k, v] of Object.entries(view)) {
      if (!Array.isArray(v)) continue;
      for (const x of v) {
        if (typeof x === "number") top(k, x);
        else if (Array.isArray(x)) x.forEach((y, i) => top(`${k}.${i}`, y));
        else if (x && typeof x === "object") for (const [field, y] of Object.entries(x)) top(`${k}.${field}`, y);
      }
    }
  }
  return scales;
}

// what Space activates by itself: a key on one of these is the control's, not the simulation's
const CONTROL = "button,input,select,textarea,summary,a,label,[contenteditable],[role=button],[role=checkbox]";

/**
 * The element's keys (play.js passes the page's keys here too). A field keeps every key (a slider
 * its arrows); any other control keeps Space (a button is pressed, a box ticked), so Space plays
 * and pauses only when focus is on no control.
 */
export function handleKey(sim, e) {
  const control = e.target?.closest?.(CONTROL);
  if (control && (/^(INPUT|SELECT|TEXTAREA)$/.test(control.tagName) || e.key === " ")) return;
  if (e.key === " " || e.key === "k") {
    e.preventDefault();
    sim.clock.playing ? sim.pause() : sim.play();
  } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
    e.preventDefault();
    const d = (e.shiftKey ? 5 : 1) * (e.key === "ArrowRight" ? 1 : -1);
    sim.seek(sim.t + d).catch(() => {});
  } else if (e.key === ".") {
    e.preventDefault();
    sim.step().catch(() => {});
  } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
    e.preventDefault();
    sim.setSpeed(sim.speed * (e.key === "ArrowUp" ? 1.25 : 0.8));
  }
}
