"""The notebooks' paired py:percent scripts and .ipynb files stay in sync.

Executing the notebooks is CI's job (``pytest --nbmake notebooks/``, a few
minutes); this fast check only makes sure a reviewer reading the ``.py`` diff
sees exactly what the ``.ipynb`` runs.
"""

from __future__ import annotations

import pathlib

import pytest

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"


@pytest.mark.parametrize("ipynb", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_matches_paired_script(ipynb):
    jupytext = pytest.importorskip("jupytext")
    script = ipynb.with_suffix(".py")
    assert script.exists(), f"{ipynb.name} has no paired py:percent script"
    nb = jupytext.read(ipynb)
    py = jupytext.read(script)
    cells_nb = [(c.cell_type, c.source.strip()) for c in nb.cells]
    cells_py = [(c.cell_type, c.source.strip()) for c in py.cells]
    assert cells_nb == cells_py, "run `jupytext --sync` on the notebook"
    assert "py:percent" in str(nb.metadata.get("jupytext", {}).get("formats", ""))


def test_there_is_a_notebook():
    assert sorted(NOTEBOOKS.glob("*.ipynb")), "notebooks/ should hold the Section-6 notebook"
