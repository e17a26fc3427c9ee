// The iframe fallback page (/embed/PRESET/?seed=…): copies the query into the element's attributes
// (this module runs before embed.js defines the element) and tells the parent page its height by
// postMessage {type: "contention:resize", height, src} whenever it changes. Messages go only to
// the embedding page's origin (from ?origin=, else the referrer), "*" only when neither is known.
const KEYS = ["seed", "speed", "panels", "t", "theme", "loading", "controls", "caption", "autoplay", "overrides", "actions", "height"];
const q = new URLSearchParams(location.search);
const el = document.querySelector("contention-sim");
for (const k of KEYS) if (q.has(k)) el.setAttribute(k, q.get(k));

function parentOrigin() {
  try {
    if (q.has("origin")) return new URL(q.get("origin")).origin;
    if (document.referrer) return new URL(document.referrer).origin;
  } catch {}
  return "*";
}
const target = parentOrigin();
let last = -1;
function send() {
  const h = Math.ceil(document.documentElement.getBoundingClientRect().height);
  if (h === last || window.parent === window) return;
  last = h;
  window.parent.postMessage({ type: "contention:resize", height: h, src: location.href }, target);
}
new ResizeObserver(send).observe(document.documentElement);
send();
