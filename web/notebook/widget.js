// The notebook widget's front end (anywidget's ESM; web/notebook/__init__.py ships it as `_esm`).
// It links the element's modules (shipped in the `_modules` trait) as blob URLs, renders a
// <contention-sim> and answers its worker requests through the kernel (widget messages).
function link(mods) {
  const urls = {};
  for (const [rel, src] of mods) {
    const code = src.replace(/(["'])contention:([^"']+)\1/g, (m, q, dep) => q + urls[dep] + q);
    urls[rel] = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  }
  return urls;
}

function kernelWorker(model) {
  let next = 1;
  const pending = new Map();
  model.on("msg:custom", (msg) => {
    if (!msg || msg.type !== "reply") return;
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new Error(msg.error));
  });
  return {
    request(op, args) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        model.send({ type: "request", id, op, args });
      });
    },
    onRestart() {
      return () => {};
    },
  };
}

async function render({ model, el }) {
  globalThis.contentionPresets = model.get("_preset_names");
  if (!globalThis.__contentionEmbed) {
    globalThis.contentionModuleUrls = link(model.get("_modules")); // render.js's loadTopic reads it
    globalThis.__contentionEmbed = import(globalThis.contentionModuleUrls["js/embed.js"]);
  }
  const { EmbedSim } = await globalThis.__contentionEmbed;
  EmbedSim.inlineCss ||= model.get("_css");
  const meta = model.get("meta");
  if (!document.querySelector(`script[data-contention-preset="${meta.name}"]`)) {
    const data = document.createElement("script");
    data.type = "application/json";
    data.dataset.contentionPreset = meta.name;
    data.textContent = JSON.stringify(meta);
    document.head.append(data);
  }
  const sim = document.createElement("contention-sim");
  sim.setAttribute("preset", meta.name);
  sim.setAttribute("seed", String(model.get("seed")));
  sim.setAttribute("panels", model.get("panels").join(","));
  sim.setAttribute("speed", String(model.get("speed")));
  sim.setAttribute("loading", "eager");
  if (model.get("theme")) sim.setAttribute("theme", model.get("theme"));
  if (model.get("height")) sim.setAttribute("height", String(model.get("height")));
  sim.workerSource = kernelWorker(model);
  el.append(sim);
  const follow = () =>
    sim
      .whenReady()
      .then(() => {
        sim.pause();
        return sim.seek(model.get("t"));
      })
      .catch(() => {});
  model.on("change:t", follow);
  return () => {
    model.off("change:t", follow);
    sim.remove();
  };
}
export default { render };
