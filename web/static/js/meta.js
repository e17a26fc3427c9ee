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
 * The panels shown by default: the meta's `shown` (sims.core.api.shown_panels: the preset's
 * site.panels, else its claim's); for a meta without it, the claim's panels when the preset states
 * a claim (a claim names the few that make its point), else every panel. The others are one click
 * away in the panel picker.
 */
export function defaultPanels(meta) {
  const all = meta.panels.map((p) => p.name);
  if (Array.isArray(meta.shown)) return all.filter((n) => meta.shown.includes(n));
  const claim = (claimOf(meta)?.panels || []).filter((n) => all.includes(n));
  if (claim.length < 2) return all;
  return all.filter((n) => claim.includes(n));
}

/** The preset's claim ([site.claim]: metric, panels best first, margin, at), or null. */
export const claimOf = (meta) => meta.site?.claim || meta.claim || null;

/** The panels shown without a `panels` attribute: the preset's default, then every edit. */
export const shownByDefault = (meta, edits) => [
  ...new Set([...defaultPanels({ ...meta, panels: meta.panels.filter((p) => !p.edited) }), ...edits.map((e) => e.name)]),
];
