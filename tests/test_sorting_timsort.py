"""``timsort`` is CPython's list.sort: its comparison count equals list.sort's, counted with a
``__lt__`` counter, on every input kind at sizes up to 10,000 (tests/sortcount.py), on Hypothesis
inputs, in this CPython, in the other CPythons this machine has, and in Pyodide."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import sortcount
from budget import examples
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sims.sorting.timsort import minrun, power

ROOT = Path(__file__).resolve().parents[1]


def test_every_input_kind_up_to_10000_matches_list_sort():
    report = sortcount.compare_all()
    assert report["cases"] == len(sortcount.SIZES) * 6
    assert not report["mismatches"], report["mismatches"][:3]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.integers(0, 12), max_size=300) | st.lists(st.integers(-(10**6), 10**6), max_size=300))
@example([3, 2, 3, 4, 1])  # a reversed run extended by an ascending tail (3.13)
@example([2, 2, 1, 1, 0])  # equal keys inside a descending run
@example(list(range(64)) + list(range(64)))  # two runs that merge by galloping
def test_hypothesis_inputs_match_list_sort(keys):
    assert sortcount.timsort_comparisons(keys) == sortcount.list_sort_comparisons(keys)


def test_the_3_11_rules_differ_from_the_3_13_rules_on_equal_keys_in_a_descending_run():
    keys = [5, 5, 4, 4, 3, 3, 2, 2, 1, 1] * 3
    assert sortcount.timsort_comparisons(keys, "3.11") != sortcount.timsort_comparisons(keys, "3.13")


def test_minrun_and_power_as_listobject_c_computes_them():
    assert [minrun(n) for n in (1, 63, 64, 65, 127, 128, 2112, 5000)] == [1, 63, 32, 33, 64, 32, 33, 40]
    # runs [0, 64) and [64, 128) of 128: midpoints 1/4 = .01 and 3/4 = .11 differ in bit 1;
    # [0, 32) and [32, 64): 1/8 = .001 and 3/8 = .011 in bit 2; a boundary deeper in, a higher power
    assert power(0, 64, 64, 128) == 1
    assert power(0, 32, 32, 128) == 2 and power(64, 32, 32, 128) == 2
    assert power(0, 16, 16, 128) == 3


def _other_pythons() -> list[str]:
    found = []
    for exe in ("python3.12", "python3.13", "python3.14"):
        for version in ("3.12.1", "3.13.0", ""):  # pyenv's shims name the version they run
            env = dict(os.environ, PYENV_VERSION=version) if version else dict(os.environ)
            path = shutil.which(exe)
            if path and subprocess.run([path, "-c", "1"], env=env, capture_output=True).returncode == 0:
                found.append((exe, version))
                break
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("exe", "version"), _other_pythons() or [pytest.param("none", "", marks=pytest.mark.skip)])
def test_other_cpythons_match_their_own_list_sort(exe, version):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **({"PYENV_VERSION": version} if version else {}))
    out = subprocess.run(
        [shutil.which(exe), str(ROOT / "tests" / "sortcount.py")], capture_output=True, text=True, env=env, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["cases"] == len(sortcount.SIZES) * 6 and not report["mismatches"], report


@pytest.mark.pyodide
def test_pyodide_matches_its_own_list_sort(tmp_path):
    if not (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists():
        pytest.fail("Pyodide is not installed: run `npm ci` (make test does)")
    import sitebuild

    archive = tmp_path / "sims.zip"
    sitebuild.pack_python(archive)
    out = subprocess.run(
        ["node", str(ROOT / "tests" / "node" / "pyodide_py.mjs"), str(archive), str(ROOT / "tests" / "sortcount.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["python"].startswith("3.14") and report["cpython"] == "3.13", report
    assert report["cases"] == len(sortcount.SIZES) * 6 and not report["mismatches"], report
