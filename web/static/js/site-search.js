// Search across concepts, scenarios, topics and tracks (sitebuild/search_index.py): the index is a
// static file of the site, so search needs no server and works offline. Every word of the query
// must match a word of an entry (its start: "bellman" finds "Bellman-Ford"); a match in the title
// weighs most, then the name and tags, then the other words, then the summary, and concepts come
// first among equals. The search page adds filters by kind and tag; the URL keeps the query.

const KIND_ORDER = ["concept", "preset", "topic", "track"];
const LABEL = { concept: "concept", preset: "scenario", topic: "topic", track: "track" };
const SHOWN = 12; // results listed before "N more"
let index = null;

function loadIndex(root) {
  index ||= fetch(new URL("static/search.json", new URL(root, location.href))).then((r) => {
    if (!r.ok) throw new Error(`search index: HTTP ${r.status}`);
    return r.json();
  });
  return index;
}

const words = (text) => text.toLowerCase().match(/[\p{L}\p{N}.+]+/gu) || [];

/** The entry's score for the query's words (0: some word does not match). */
function score(e, terms) {
  const fields = [
    [words(e.t), 10],
    [e.g.flatMap(words), 5],
    [e.x.split(" "), 4],
    [words(e.s), 1],
  ];
  let total = 0;
  for (const term of terms) {
    let best = 0;
    for (const [list, w] of fields) {
      for (const word of list) {
        if (word === term) best = Math.max(best, w * 1.5);
        else if (word.startsWith(term)) best = Math.max(best, w);
      }
    }
    if (!best) return 0;
    total += best;
  }
  return total + (e.k === "concept" ? 2 : 0);
}

export function search(entries, query, { kinds = KIND_ORDER, tag = "" } = {}) {
  const terms = words(query);
  return entries
    .filter((e) => kinds.includes(e.k) && (!tag || e.g.includes(tag)))
    .map((e) => ({ e, s: terms.length ? score(e, terms) : 1 }))
    .filter((r) => r.s > 0)
    .sort((a, b) => b.s - a.s || KIND_ORDER.indexOf(a.e.k) - KIND_ORDER.indexOf(b.e.k) || a.e.t.localeCompare(b.e.t))
    .map((r) => r.e);
}

function item(e, root) {
  const li = document.createElement("li");
  li.className = `search-hit kind-${e.k}`;
  const a = Object.assign(document.createElement("a"), { href: root + e.u, textContent: e.t });
  const kind = Object.assign(document.createElement("span"), { className: "search-kind", textContent: LABEL[e.k] });
  const s = Object.assign(document.createElement("span"), { className: "search-summary", textContent: e.s });
  li.append(kind, a, s);
  return li;
}

function wire(form) {
  const root = form.dataset.root || "";
  const input = form.querySelector("input[type=search]");
  const list = form.querySelector("[data-search-results]");
  const count = form.querySelector("[data-search-count]");
  const filters = form.querySelector(".search-filters");
  const tagSel = form.querySelector("select[name=tag]");
  const params = new URLSearchParams(location.search);
  if (params.get("q")) input.value = params.get("q");
  if (tagSel && params.get("tag")) tagSel.value = params.get("tag");

  const update = async () => {
    const q = input.value.trim();
    const tag = tagSel?.value || "";
    if (!q && !tag) {
      list.replaceChildren();
      count.textContent = "";
      return;
    }
    let entries;
    try {
      entries = await loadIndex(root);
    } catch (err) {
      count.textContent = String(err.message || err);
      return;
    }
    const kinds = filters ? [...filters.querySelectorAll("input:checked")].map((i) => i.value) : KIND_ORDER;
    const hits = search(entries, q, { kinds, tag });
    const limit = filters ? hits.length : SHOWN;
    list.replaceChildren(...hits.slice(0, limit).map((e) => item(e, root)));
    const more = hits.length > limit ? ` · all ${hits.length} on the search page` : "";
    count.textContent = hits.length ? `${hits.length} found${more}` : "Nothing found.";
    if (filters) history.replaceState(null, "", `?${new URLSearchParams({ ...(q && { q }), ...(tag && { tag }) })}`);
  };
  input.addEventListener("input", update);
  form.addEventListener("change", update);
  form.addEventListener("submit", (e) => {
    if (!filters) return; // the home page's box goes to the search page with the query
    e.preventDefault();
    update();
  });
  if (input.value || tagSel?.value) update();
}

if (typeof document !== "undefined") for (const form of document.querySelectorAll("[data-site-search]")) wire(form); // (Node: the unit tests)
