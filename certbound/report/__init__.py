"""Report layer: certified numbers rendered for people and files (the pipeline's edge).

Submodules (imported on use, so that ``import certbound`` does not load matplotlib):

* :mod:`certbound.report.table` — plain-text terminal tables of already-formatted cells;
* :mod:`certbound.report.latex` — LaTeX fragments, every digit rounded outward;
* :mod:`certbound.report.writers` — atomic text/JSON/CSV files (all-or-nothing);
* :mod:`certbound.report.figures` — Section-6 figures from certified proxies (matplotlib, optional).

Nothing here computes a bound: certified values arrive as Arb balls or as strings already rounded
outward by :mod:`certbound.ball`.
"""

__all__ = ["figures", "latex", "table", "writers"]
