// Our own sims.zip, read in JavaScript: Pyodide's unpackArchive does it in Python, which in a cold
// page costs 0.6-1.5 s of first-time WebAssembly; here the entries inflate (DecompressionStream)
// while Pyodide loads, and only the writes wait for it. Only what sitebuild/pack.py writes is
// read: stored or deflated entries, no zip64, no encryption; anything else is refused by name.
const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** The files of the zip `bytes`, as [path, contents] in archive order (directories left out). */
export async function readZip(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === EOCD) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error("sims.zip: no end of central directory");
  const count = view.getUint16(end + 10, true);
  const names = new TextDecoder();
  const entries = [];
  for (let k = 0, p = view.getUint32(end + 16, true); k < count; k++) {
    if (view.getUint32(p, true) !== CENTRAL) throw new Error("sims.zip: bad central directory");
    const method = view.getUint16(p + 10, true);
    const size = view.getUint32(p + 24, true);
    const packed = view.getUint32(p + 20, true);
    const [nameLen, extraLen, commentLen] = [28, 30, 32].map((o) => view.getUint16(p + o, true));
    const local = view.getUint32(p + 42, true);
    const name = names.decode(bytes.subarray(p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
    if (name.endsWith("/")) continue;
    if (name.startsWith("/") || name.split("/").includes("..")) throw new Error(`sims.zip: unsafe path ${name}`);
    if (view.getUint32(local, true) !== LOCAL) throw new Error(`sims.zip: bad local header for ${name}`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    entries.push({ name, method, size, data: bytes.subarray(start, start + packed) });
  }
  return Promise.all(entries.map(async (e) => [e.name, await contents(e)]));
}

async function contents({ name, method, size, data }) {
  let out;
  if (method === 0) out = data;
  else if (method === 8) {
    const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    out = new Uint8Array(await new Response(stream).arrayBuffer());
  } else throw new Error(`sims.zip: ${name} uses compression method ${method}`);
  if (out.length !== size) throw new Error(`sims.zip: ${name} is ${out.length} bytes, not ${size}`);
  return out;
}

/** Write `files` (readZip's) under `dir` in Pyodide's file system `FS`. */
export function writeFiles(FS, files, dir) {
  const made = new Set();
  for (const [name, data] of files) {
    const path = `${dir}/${name}`;
    const parent = path.slice(0, path.lastIndexOf("/"));
    if (!made.has(parent)) {
      FS.mkdirTree(parent);
      made.add(parent);
    }
    FS.writeFile(path, data);
  }
}
