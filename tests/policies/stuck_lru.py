from sims.cache.classic import LRU
from sims.core.registry import register_policy


@register_policy("cache", "lru")
class Stuck(LRU):
    def access(self, key):
        if key == 5:
            while True:
                pass
        return super().access(key)


# An edited policy that never returns on key 5: the step budget must stop it at line 9, the loop
# (tests/test_userpolicy.py, tests/browser/test_editor.py). Read as text, never imported; this
# note sits last so that the loop keeps its line.
