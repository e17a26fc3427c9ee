"""The web side, split by where the code runs: ``web.pyodide`` (inside the browser's worker),
``web/static`` (the front end), ``web.notebook`` (a Jupyter kernel) and the server. Importing this
package imports nothing beyond the standard library."""
