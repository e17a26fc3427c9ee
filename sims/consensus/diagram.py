"""The space-time diagram of a recorded consensus run: ``svg(panel, title="", until=None)``.

The drawing is shared with replication and election and lives in ``sims.net.diagram`` (the
rows and violations each topic adds: ``sims.net.diagram_rows``); this path stays for the
callers that import it from here.
"""

from __future__ import annotations

from sims.net.diagram import _CHAR, svg

__all__ = ["_CHAR", "svg"]
