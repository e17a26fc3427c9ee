"""``python -m web.server [PORT]``: the server on 127.0.0.1 (``contention serve`` is the usual way)."""

import sys

from web.server import main

sys.exit(main(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000))
