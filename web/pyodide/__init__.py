"""Code that runs inside Pyodide: ``bridge`` answers the browser worker's requests. Standard
library and ``sims`` only; the site build runs the same code in CPython for its posters."""
