// How Pyodide's wasm starts in the worker (worker.js; tests/node/pyodide_run.mjs uses the memory part).
// - Memory: Pyodide restores a memory snapshot into the memory its wasm starts with (480 pages,
//   30 MiB) and cannot grow it first, so a snapshot of a Python that grew past that fails to
//   restore; the hook below grows the new instance's memory to the snapshot's size before
//   Pyodide (Emscripten) takes its views of it.
// - Compilation: Pyodide compiles its wasm only once the snapshot has arrived (loadPyodide awaits
//   the snapshot, then instantiates). `compileEarly` fetches and compiles it as the worker starts,
//   and the hook hands Pyodide that fetch and that module, so the two overlap (one download).

const PAGE = 65536;

/** Start fetching and compiling the wasm at `url` (Pyodide's pyodide.asm.wasm). */
export function compileEarly(url) {
  const response = fetch(url);
  const module = WebAssembly.compileStreaming(response);
  response.catch(() => {});
  module.catch(() => {}); // observed at instantiation, where a failure falls back to Pyodide's own way
  return { url, response, module };
}

/** Until the next instantiation: grow the new instance's exported `memory` to at least `bytes`
 * and, given `early` (compileEarly's), answer Pyodide's fetch of its wasm with early's and
 * instantiate early's module. Returns a function that takes the hooks away. */
export function growAtInstantiation(bytes, early = null) {
  const originals = {
    instantiate: WebAssembly.instantiate,
    instantiateStreaming: WebAssembly.instantiateStreaming,
    fetch: globalThis.fetch,
  };
  const undo = () => {
    WebAssembly.instantiate = originals.instantiate;
    WebAssembly.instantiateStreaming = originals.instantiateStreaming;
    globalThis.fetch = originals.fetch;
  };
  const grown = (result) => {
    const memory = result && result.instance && result.instance.exports.memory;
    if (memory instanceof WebAssembly.Memory) {
      undo();
      const short = Math.ceil(((bytes || 0) - memory.buffer.byteLength) / PAGE);
      if (short > 0) memory.grow(short);
    }
    return result;
  };
  WebAssembly.instantiate = async (...args) => grown(await originals.instantiate.apply(WebAssembly, args));
  if (typeof originals.instantiateStreaming === "function") {
    WebAssembly.instantiateStreaming = async (source, imports) => {
      if (early) {
        let module = null;
        try {
          module = await early.module;
        } catch {
          source = originals.fetch.call(globalThis, early.url); // compiled nothing: Pyodide's way, on a fresh fetch
        }
        if (module) return grown({ module, instance: await originals.instantiate.call(WebAssembly, module, imports) });
      }
      return grown(await originals.instantiateStreaming.call(WebAssembly, source, imports));
    };
  }
  if (early)
    globalThis.fetch = (input, init) => (String(input) === early.url ? early.response : originals.fetch.call(globalThis, input, init));
  return undo;
}
