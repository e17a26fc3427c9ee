"""How many examples a property test tries: all of them in `make test`; a fifth (at least 10) in
`make check`, which sets CONTENTION_CHECK=1 (docs/architecture.md, "Two speeds of testing")."""

from __future__ import annotations

import os


def examples(n: int) -> int:
    return max(10, n // 5) if os.environ.get("CONTENTION_CHECK") else n
