// A preset's site metadata (what describe(preset) gives the site): inline on its page as
// <script type="application/json" data-contention-preset="NAME">, else static/presets/NAME.json.

const STATIC = new URL("../", import.meta.url);
const cache = new Map();

export function loadMeta(name) {
  if (cache.has(name)) return cache.get(name);
  const inline = document.querySelector(`script[type="application/json"][data-contention-preset="${CSS.escape(name)}"]`);
  const p = inline
    ? Promise.resolve(JSON.parse(inline.textContent))
    : fetch(new URL(`presets/${encodeURIComponent(name)}.json`, STATIC)).then((r) => {
        if (r.status === 404) throw new Error(`unknown preset "${name}"`);
        if (!r.ok) throw new Error(`cannot load preset "${name}": HTTP ${r.status}`);
        return r.json();
      });
  cache.set(name, p);
  return p;
}

/**
 * The panels shown by default: the claim's panels when the preset states a claim (a claim names
 * the few that make its point; queues-hockey-stick's ρ ladder needs five), else every panel.
 * The others are one click away in the panel picker.
 */
export function defaultPanels(meta) {
  const all = meta.panels.map((p) => p.name);
  const claim = (claimOf(meta)?.panels || []).filter((n) => all.includes(n));
  if (claim.length < 2) return all;
  return all.filter((n) => claim.includes(n));
}

/** The preset's claim ([site.claim]: metric, panels best first, margin, at), or null. */
export const claimOf = (meta) => meta.site?.claim || meta.claim || null;
