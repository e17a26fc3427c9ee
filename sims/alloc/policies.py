"""Every allocation policy, imported in registration order (the order menus and error messages
list them): the four fits (``fits.py``), binary buddy (``buddy.py``), slab size classes
(``slab.py``) and fixed pages (``paged.py``), all on the ``Allocator`` interface of ``base.py``."""

# isort: off
from sims.alloc import fits, buddy, slab, paged  # noqa: F401  (each registers its policies)

# isort: on
from sims.alloc.base import Allocator

__all__ = ["Allocator"]
