// Run a Python file in Pyodide under Node, with an archive (sims/) unpacked on its path, and print
// what it prints. usage: node tests/node/pyodide_py.mjs ARCHIVE.zip SCRIPT.py
// Used where a test needs Pyodide's own interpreter, not only our code (list.sort's comparisons).
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const indexURL = dirname(require.resolve("pyodide/package.json")) + "/";
const [archive, script] = process.argv.slice(2);
const out = [];
const pyodide = await loadPyodide({ indexURL, stdout: (s) => out.push(s), stderr: (s) => process.stderr.write(s + "\n") });
pyodide.unpackArchive(new Uint8Array(readFileSync(archive)), "zip", { extractDir: "/app" });
pyodide.runPython("import sys; sys.path.insert(0, '/app')");
pyodide.runPython(readFileSync(script, "utf8"));
process.stdout.write(out.join("\n"));
