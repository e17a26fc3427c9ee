// node render_views.mjs TOPIC KIND VIEWS.json: draws every view in the JSON file
// ({preset: {panel: view}}) with the renderer that web/static/js/topics/TOPIC.js registers for
// view kind KIND, on a recording stand-in for a canvas context, at two sizes; exits 1 on any throw
// or a non-finite coordinate, and prints {"calls": N}. Run by the topics' tests.
import fs from "fs";
import { fileURLToPath } from "url";
import path from "path";

const [topic, kind, file] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const js = path.join(here, "..", "..", "web", "static", "js");
const { RENDERERS } = await import(path.join(js, "render.js"));
await import(path.join(js, "topics", `${topic}.js`));
if (!RENDERERS[kind]) throw new Error(`topics/${topic}.js registers no renderer for view kind ${kind}`);
let calls = 0;
// text is measured as a 12 px sans-serif would be, near enough for the renderers' layout
const measureText = (s) => ({ width: 6.5 * String(s).length, actualBoundingBoxAscent: 9, actualBoundingBoxDescent: 3 });
const ctx = new Proxy(
  { measureText },
  {
    get: (o, k) =>
      k in o
        ? o[k]
        : (...args) => {
            calls++;
            if (args.some((x) => typeof x === "number" && !Number.isFinite(x))) throw new Error(`${String(k)}(${args})`);
          },
    set: (o, k, v) => ((o[k] = v), true),
  },
);
const theme = {
  onAccent: "#fff",
  fg: "#000",
  muted: "#888",
  accent: "#36c",
  good: "#3a3",
  bad: "#c33",
  track: "#eee",
  palette: ["#f00"],
  font: "sans-serif",
};
const views = JSON.parse(fs.readFileSync(file, "utf8"));
for (const panels of Object.values(views))
  for (const v of Object.values(panels))
    for (const box of [
      { w: 600, h: 360 },
      { w: 280, h: 180 },
    ])
      RENDERERS[kind](ctx, v, box, theme);
console.log(JSON.stringify({ calls }));
