// Run the CLI (`python -m sims ARGS...`) in Pyodide under Node, from an archive holding sims/ alone.
// usage: node tests/node/pyodide_cli.mjs ARCHIVE.zip ARGS...
// Prints one JSON object: {"rc": exit status, "stdout": "...", "stderr": "..."}.
import { loadPyodide } from "pyodide";
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const indexURL = dirname(require.resolve("pyodide/package.json")) + "/";
const [archive, ...args] = process.argv.slice(2);

const out = [];
const err = [];
const pyodide = await loadPyodide({ indexURL, stdout: (s) => out.push(s), stderr: (s) => err.push(s) });
pyodide.unpackArchive(new Uint8Array(readFileSync(archive)), "zip", { extractDir: "/app" });
pyodide.globals.set("cli_args", pyodide.toPy(args));
const rc = pyodide.runPython(`
import runpy, sys
sys.path.insert(0, "/app")
sys.argv = ["sims", *cli_args]
try:
    runpy.run_module("sims", run_name="__main__", alter_sys=True)
    rc = 0
except SystemExit as exc:
    rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
sys.stdout.flush()
rc
`);
process.stdout.write(JSON.stringify({ rc, stdout: out.join("\n"), stderr: err.join("\n") }));
