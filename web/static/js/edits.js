// Edited policies (the "Edit a policy" editor, editor.js): what the element and its links know of
// them. An edit is {base, name, source, code}: the panel it was edited from, the new panel's name
// ("lru (edited)"), the Python source, and `code`, the source compressed (deflate-raw) in
// base64url, which a link carries as edit.BASE=CODE. The edited code runs only in the worker
// (web/pyodide/ops_editor.py); the server never sees it.
export const SUFFIX = " (edited)";

const b64url = (bytes) => {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
};
const unb64url = (text) => Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));

async function pipe(bytes, stream) {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

/** Python source -> the text a link carries. */
export const packSource = async (source) => b64url(await pipe(new TextEncoder().encode(source), new CompressionStream("deflate-raw")));

/** The text a link carries -> the Python source. */
export const unpackSource = async (code) => new TextDecoder().decode(await pipe(unb64url(code), new DecompressionStream("deflate-raw")));

/** One edit from its base panel and source (compressing it for links). */
export const makeEdit = async (base, source) => ({ base, name: base + SUFFIX, source, code: await packSource(source) });

/** The element's `edits` attribute ("BASE=CODE&...", as play.html copies it from the link) -> edits. */
export async function parseEdits(text) {
  const out = [];
  for (const [base, code] of new URLSearchParams(text || "")) {
    try {
      out.push({ base, name: base + SUFFIX, source: await unpackSource(code), code });
    } catch {
      throw new Error(`the link's edit of "${base}" is damaged (it could not be decompressed)`);
    }
  }
  return out;
}

/** The preset's meta with one panel per edit after its own (same policy and parameters as its base). */
export function withEdits(meta, edits) {
  const own = meta.panels.filter((p) => !p.edited);
  const added = [];
  for (const e of edits) {
    const base = own.find((p) => p.name === e.base);
    if (!base) throw new Error(`an edit names the panel "${e.base}", which ${meta.name} does not have`);
    added.push({ ...base, name: e.name, edited: true });
  }
  return { ...meta, panels: [...own, ...added] };
}
