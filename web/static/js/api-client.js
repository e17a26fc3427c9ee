// Server actions on a preset page, offered only when the page is served by `contention serve`.
// The API is discovered at <site root>/api/ (resolved from this module's own URL): when
// /api/health does not answer as Contention's API (a static host), nothing is shown. Each
// <div class="server-actions" data-preset="NAME"> gets "Run at full length on the server" (POST
// /api/run, the `run --json` object shown as a table) and, when /api/gpu says a GPU is available
// and the preset is an engine preset, "Measure on GPU" (POST /api/gpu/replay, measured beside
// simulated). On cache and rate-limit presets, "Replay on real Redis" / "Replay on real nginx"
// (POST /api/real/replay, from `contention serve --real`), or the reason it is not offered.

const API = new URL("../../api/", import.meta.url);

async function getJSON(path, init) {
  const r = await fetch(new URL(path, API), init);
  const type = r.headers.get("content-type") || "";
  const body = type.startsWith("application/json") ? await r.json() : null;
  return { ok: r.ok, status: r.status, body, retryAfter: r.headers.get("retry-after") };
}

async function discover() {
  try {
    const h = await getJSON("health", { cache: "no-store" });
    return h.ok && h.body && h.body.service === "contention";
  } catch {
    return false;
  }
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const c of children) node.append(c);
  return node;
}

export function fmt(v) {
  if (typeof v !== "number") return String(v ?? "");
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 1000 ? String(Math.round(v)) : String(Number(v.toPrecision(4)));
}

function table(head, rows) {
  const t = el("table");
  t.append(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col", textContent: h })))));
  const body = el("tbody");
  for (const r of rows) body.append(el("tr", {}, ...r.map((c, i) => el(i ? "td" : "th", { textContent: fmt(c) }))));
  t.append(body);
  return el("div", { className: "table-wrap" }, t);
}

// The run --json object as the CLI prints it: one row per metric, one column per panel.
export function runTable(result) {
  const names = Object.keys(result.panels);
  const metrics = [];
  for (const m of Object.values(result.panels)) for (const k of Object.keys(m)) if (!metrics.includes(k)) metrics.push(k);
  return table(
    ["metric", ...names],
    metrics.map((k) => [k, ...names.map((n) => result.panels[n][k] ?? "")]),
  );
}

const LABELS = { s: "step time, total (s)", tok_s: "tokens/s" };

// Measured beside simulated: gpu.measured_X / gpu.sim_X pairs, then the panel's simulated metrics.
export function replayTable(result) {
  const gpu = result.gpu || {};
  const rows = [];
  for (const [k, v] of Object.entries(gpu)) {
    if (!k.startsWith("measured_")) continue;
    const name = k.slice("measured_".length);
    rows.push([LABELS[name] || name, gpu[`sim_${name}`] ?? "", v]);
  }
  for (const [k, v] of Object.entries(gpu)) {
    if (typeof v === "number" && !k.startsWith("measured_") && !k.startsWith("sim_")) rows.push([k, "", v]);
  }
  const sim = (result.sim && result.sim.metrics) || {};
  for (const [k, v] of Object.entries(sim)) if (typeof v === "number") rows.push([k, v, ""]);
  return table(["quantity", "simulated", "measured"], rows);
}

function currentRun(container) {
  const sim = document.querySelector("contention-sim");
  const body = { preset: container.dataset.preset };
  const state = sim && typeof sim.linkState === "function" && sim.meta ? sim.linkState() : null;
  const seed = state ? state.seed : Number(sim?.getAttribute("seed"));
  if (Number.isInteger(seed) && seed >= 0) body.seed = seed;
  if (state && state.panels.join(",") !== state.defaultPanels.join(",")) body.panels = state.panels;
  return { body, tweaked: !!state && Object.keys(state.overrides || {}).length > 0 };
}

function explain(res) {
  if (res.status === 429) return `The server is busy; try again in ${res.retryAfter || "a few"} s.`;
  if (res.body && res.body.error) return `The server refused: ${res.body.error}`;
  return `The server answered ${res.status}.`;
}

function action(container, label, path, makeBody, render) {
  const status = el("span", { className: "muted" });
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  const out = el("div", { className: "server-result" });
  const button = el("button", { type: "button", className: "cs-btn", textContent: label });
  button.addEventListener("click", async () => {
    const { body, note } = makeBody();
    button.disabled = true;
    status.textContent = "Running on the server…";
    const t0 = performance.now();
    try {
      const res = await getJSON(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!res.ok || !res.body) {
        status.textContent = explain(res);
        return;
      }
      out.replaceChildren(render(res.body));
      status.textContent = `Done in ${((performance.now() - t0) / 1000).toFixed(1)} s (seed ${res.body.seed ?? body.seed ?? "default"}).${note}`;
    } catch (err) {
      status.textContent = `The server did not answer (${err.message}).`;
    } finally {
      button.disabled = false;
    }
  });
  container.append(el("p", {}, button, " ", status), out);
}

async function setUp(container) {
  const run = () => {
    const { body, tweaked } = currentRun(container);
    return { body, note: tweaked ? " The server runs the preset's own parameters, without your slider changes." : "" };
  };
  action(container, "Run at full length on the server", "run", run, (r) =>
    el(
      "div",
      {},
      el("p", { className: "muted", textContent: `${r.preset}: ${r.duration} s virtual, stream ${r.stream_sha256.slice(0, 12)}` }),
      runTable(r),
    ),
  );

  const [gpu, preset, real] = await Promise.all([
    getJSON("gpu").catch(() => null),
    getJSON(`presets/${encodeURIComponent(container.dataset.preset)}`).catch(() => null),
    getJSON("real").catch(() => null),
  ]);
  const topic = preset?.body?.topic;
  if (gpu?.body?.available && topic === "engine") {
    const replay = () => {
      const { body } = run();
      delete body.panels;
      return { body, note: ` Measured on ${gpu.body.device}.` };
    };
    action(container, "Measure on GPU", "gpu/replay", replay, (r) => replayTable(r));
  }
  realReplays(container, real?.body, topic, preset?.body);
}

const REAL = { redis: "Redis", nginx: "nginx" };

// The real system beside the simulator: its measured panels next to the models of the same setting.
function realReplays(container, info, topic, preset) {
  if (!info) return;
  for (const [system, label] of Object.entries(REAL)) {
    const s = info[system];
    if (!s || s.topic !== topic) continue;
    if (!s.available) {
      container.append(el("p", { className: "muted", textContent: `Replay on real ${label}: not offered here (${s.reason}).` }));
      continue;
    }
    const speed = system === "redis" ? 4 : 1; // Redis's clocks are modelled at the replay's speed
    const duration = Math.min(preset?.duration ?? 30, 30 * speed);
    const body = () => ({
      body: { preset: container.dataset.preset, against: system, speed, duration },
      note: ` ${duration} s of the stream at ${speed}x; models and measurement side by side.`,
    });
    action(container, `Replay on real ${label}`, "real/replay", body, (r) => runTable(r));
  }
}

const containers = [...document.querySelectorAll(".server-actions[data-preset]")];
if (containers.length && (await discover())) {
  for (const c of containers) setUp(c);
}
