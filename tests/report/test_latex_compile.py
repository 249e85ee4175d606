"""Every .tex certbound writes is a fragment that compiles when \\input into a minimal article and fits the page.

Compiled with pdflatex where it is installed (``.ci/run`` installs Debian's TeX
Live and sets ``CERTBOUND_REQUIRE_LATEX=1`` so that CI never skips).
"""

import os
import shutil
import subprocess

import pytest
from flint import arb

from certbound.cli import main
from certbound.report.latex import LATEX_PREAMBLE, Raw, latex_fragment, latex_table, latex_upper

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "certbound", "models", "data", "demo")


def _pdflatex():
    exe = shutil.which("pdflatex")
    if exe is None:
        if os.environ.get("CERTBOUND_REQUIRE_LATEX") == "1":
            pytest.fail("pdflatex is required (CERTBOUND_REQUIRE_LATEX=1) but not installed")
        pytest.skip("pdflatex not installed (Debian: texlive-latex-base texlive-latex-recommended)")
    return exe


def compile_fragment(tmp_path, fragment: str) -> str:
    """\\input the fragment into a minimal article; return the log. Fails on a LaTeX error."""
    exe = _pdflatex()
    (tmp_path / "frag.tex").write_text(fragment)
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n" + LATEX_PREAMBLE
                                      + "\n\\begin{document}\n\\input{frag}\n\\end{document}\n")
    r = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert r.returncode == 0, log[-3000:]
    return log


def _assert_fits(log: str) -> None:
    assert "Overfull \\hbox" not in log, [ln for ln in log.splitlines() if "Overfull" in ln]


def test_bound_tex_compiles(tmp_path):
    _pdflatex()
    tex = tmp_path / "bound.tex"
    assert main(["bound", DEMO, "--n", "1000000000000", "--delta", "0.01", "--latex", str(tex), "--quiet"]) == 0
    text = tex.read_text()
    assert text.startswith("% certbound bound: input this") and "10^{12}" in text and "1000000000000" not in text
    _assert_fits(compile_fragment(tmp_path, text))


def test_wide_table_is_scaled_to_the_text_width(tmp_path):
    x = arb(1) / 3
    rows = [[Raw("a-rather-long-model-name"), "trained"] + [latex_upper(x * 10**k, 6) for k in range(12)]]
    frag = latex_fragment(latex_table(rows, ["model", "kind"] + [f"column {k}" for k in range(12)], caption="C"))
    _assert_fits(compile_fragment(tmp_path, frag))


def test_long_table_breaks_across_pages(tmp_path):
    x = arb(2) / 3
    rows = [[f"model-{i}", "random-init", i, 768, 12, "corrected", latex_upper(x * 10**(i % 20), 4),
             latex_upper(x * 10**(i % 7), 4), 3, 72] for i in range(150)]
    header = ["model", "kind", Raw("$L$"), Raw("$N$"), Raw("$H$"), "variant", Raw("$B_{\\mathrm{ours}}\\le$"),
              Raw("$B_{\\mathrm{Edelman}}\\le$"), Raw("$p^\\star=0$"), "matrices"]
    frag = latex_fragment(latex_table(rows, header, caption="long", label="tab:long"))
    assert "longtable" in frag
    log = compile_fragment(tmp_path, frag)
    _assert_fits(log)
    assert "Output written on doc.pdf (" in log and "(1 page" not in log  # more than one page, nothing lost


def test_proxies_tex_compiles(tmp_path):
    _pdflatex()
    from tests.report.test_figures import write_tiny_bert

    d = tmp_path / "tiny"
    write_tiny_bert(d)
    tex = tmp_path / "p.tex"
    assert main(["proxies", str(d), "--latex", str(tex), "--no-grid"]) == 0
    _assert_fits(compile_fragment(tmp_path, tex.read_text()))
