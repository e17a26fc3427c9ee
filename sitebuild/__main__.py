"""``python -m sitebuild docs``: refresh the committed docs/embedding.md from its template (a
build writes its own copy into dist/ and leaves the source tree alone)."""

from __future__ import annotations

import sys

from sitebuild import embed, pages


def main(argv: list[str]) -> int:
    if argv != ["docs"]:
        print("usage: python -m sitebuild docs", file=sys.stderr)
        return 2
    embed.DOC.write_text(pages.embedding_doc(), encoding="utf-8")
    print(f"wrote {embed.DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
