// Pyodide restores a memory snapshot into the memory its wasm starts with (480 pages, 30 MiB) and
// cannot grow it first, so a snapshot of a Python that grew past that fails to restore. Until the
// next instantiation, `growAtInstantiation(bytes)` makes WebAssembly's instantiation grow the new
// instance's memory to `bytes` before Pyodide (Emscripten) takes its views of it. Used by the
// worker (worker.js) and by tests/node/pyodide_run.mjs.
const PAGE = 65536;

/** Grow the next instance's exported `memory` to at least `bytes`; returns a function that undoes the hook. */
export function growAtInstantiation(bytes) {
  const originals = { instantiate: WebAssembly.instantiate, instantiateStreaming: WebAssembly.instantiateStreaming };
  const undo = () => Object.assign(WebAssembly, originals);
  for (const [name, original] of Object.entries(originals)) {
    if (typeof original !== "function") continue;
    WebAssembly[name] = async function (...args) {
      const result = await original.apply(WebAssembly, args);
      const memory = result && result.instance && result.instance.exports.memory;
      if (memory instanceof WebAssembly.Memory) {
        undo();
        const short = Math.ceil((bytes - memory.buffer.byteLength) / PAGE);
        if (short > 0) memory.grow(short);
      }
      return result;
    };
  }
  return undo;
}
