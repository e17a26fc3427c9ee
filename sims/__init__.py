"""Contention's simulations: standard library only; runs unchanged in CPython and Pyodide."""

__version__ = "0.1.0"
