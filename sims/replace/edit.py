"""Editing a replacement policy (the cache and paging topics' ``Topic.edit``).

The source to edit leaves out ``serve`` and ``run``, the inlined fast paths: an edited policy runs
``access`` once per reference. The edited class runs with the mechanism's contract checked after every
reference, against a resident set kept outside the policy (``contracted``): hit iff resident, a
miss admits the key, victims are resident and reported through ``on_evict``, never more keys than
the capacity; a break raises ``sims.core.editpanel.ContractError``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from sims.core.registry import EditRules
from sims.replace.base import Replacement


class ReplacementEdits(EditRules):
    """``EditRules`` for a topic whose policies are ``Replacement`` classes; ``not_editable``: the
    policies the topic wires to something an edit cannot keep (the cache's OPT, its look-ahead)."""

    def __init__(self, not_editable: tuple[str, ...] = ()) -> None:
        self.not_editable = not_editable

    def wrap(self, cls: type, steps: Any) -> type:
        return contracted(cls, steps) if issubclass(cls, Replacement) else cls

    def omit(self, cls: type) -> tuple[str, ...]:
        return ("serve", "run") if issubclass(cls, Replacement) else ()


def contracted(cls: type, steps: Any) -> type:
    """``cls`` (a Replacement) with every ``access`` checked against the mechanism's contract, one
    budget per reference, and an inherited fast ``serve`` replaced by the generic loop, so every
    reference goes through ``access`` (the fast paths equal it: tests/test_cache.py). A policy that
    ``evicts_late`` (Redis: at the next request) may hold one key over its capacity meanwhile."""
    from sims.core.editpanel import ContractError  # only an edit gets here: its panel catches it

    class Edited(cls):  # type: ignore[misc, valid-type]
        __doc__ = cls.__doc__

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._resident: set = set()  # the keys the contract says are resident
            self._victims: list = []  # reported during the current access
            super().__init__(*args, **kwargs)

        @property
        def on_evict(self) -> Callable[[Hashable], None]:
            return self._report

        @on_evict.setter
        def on_evict(self, fn: Callable[[Hashable], None] | None) -> None:
            self._chain = fn

        def _report(self, victim: Hashable) -> None:
            self._victims.append(victim)
            chain = self.__dict__.get("_chain")
            if chain is not None:
                chain(victim)

        def access(self, key: Hashable) -> bool:
            steps.start()
            resident, victims, late = self._resident, self._victims, int(bool(getattr(self, "evicts_late", False)))
            victims.clear()
            hit = super().access(key)
            for v in victims:
                if hit and not late:  # Redis evicts before it runs the command, hit or miss
                    raise ContractError(f"evicted {v!r} on a hit of {key!r}")
                if v not in resident:
                    raise ContractError(f"evicted {v!r}, which was not resident")
                resident.discard(v)
            was = key in resident
            if bool(hit) != was:
                state = "resident" if was else "not resident"
                raise ContractError(f"access({key!r}) returned {'a hit' if hit else 'a miss'}, but {key!r} was {state}")
            if not hit:
                resident.add(key)
            if len(resident) > self.size + late:
                raise ContractError(
                    f"{len(resident)} keys resident, more than the {self.size_name} {self.size}: a miss when full "
                    "must evict one key (reported through on_evict) first"
                )
            if len(self) != len(resident):
                raise ContractError(f"len() is {len(self)}, but {len(resident)} keys are resident (report each victim)")
            if key not in self:
                raise ContractError(f"{key!r} is not resident after access({key!r}): a miss admits the key")
            return hit

    owner = next(c for c in cls.__mro__ if "serve" in c.__dict__)
    if owner.__module__.startswith("sims.replace.") and owner is not Replacement:
        Edited.serve = Replacement.serve  # an inlined fast path would go round the checked access
    Edited.run = Replacement.run  # likewise every policy's batch loop: one checked access per key

    Edited.__name__ = Edited.__qualname__ = cls.__name__
    return Edited
