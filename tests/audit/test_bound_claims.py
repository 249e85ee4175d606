"""Claims about the certified generalization bound: ``bound(...)``, ``dudley(...)``, ... on the demo model.

References come from ``certbound bound certbound/models/data/demo ... --json`` (the CLI's exact dyadic
end points), rounded to decimals here with integer arithmetic, independently of certbound's printing.
"""

from __future__ import annotations

import json
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

import certbound
from certbound.audit import audit_claims, load_claims
from certbound.ball import lower_fraction, upper_fraction
from certbound.cli import main

DEMO = str(Path(certbound.__file__).parent / "models" / "data" / "demo")


# ------------------------------------------------------------------ helpers (independent of certbound)


def exact_of(text: str) -> Fraction:
    """'m*2^e' or 'm' (the JSON "exact" fields) as a Fraction."""
    if "*2^" in text:
        m, e = text.split("*2^")
        return Fraction(int(m)) * Fraction(2) ** int(e)
    return Fraction(text)


def exponent10(q: Fraction) -> int:
    """e with 10^e <= q < 10^(e+1), q > 0."""
    e = len(str(q.numerator)) - len(str(q.denominator))
    while Fraction(10) ** e > q:
        e -= 1
    while Fraction(10) ** (e + 1) <= q:
        e += 1
    return e


def sig_floor(q: Fraction, k: int) -> tuple[Fraction, Fraction]:
    """(q rounded down to k significant digits, one unit in its last place)."""
    ulp = Fraction(10) ** (exponent10(q) - k + 1)
    return (q // ulp) * ulp, ulp


def sig_ceil(q: Fraction, k: int) -> tuple[Fraction, Fraction]:
    ulp = Fraction(10) ** (exponent10(q) - k + 1)
    return -((-q) // ulp) * ulp, ulp


def dec(q: Fraction) -> str:
    """An exact decimal string for a Fraction with a power-of-ten denominator."""
    s = 0
    while (q * 10**s).denominator != 1:
        s += 1
    n = int(q * 10**s)
    return str(n) if s == 0 else f"{n // 10**s}.{n % 10**s:0{s}d}"


def cli_bound(tmp_path, *flags: str) -> tuple[Fraction, Fraction, dict]:
    """Exact [lower, upper] of `certbound bound DEMO ... --json` and the whole report."""
    out = tmp_path / f"bound{len(list(tmp_path.iterdir()))}.json"
    assert main(["bound", DEMO, *flags, "--json", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())
    return exact_of(doc["bound"]["exact"]["lower"]), exact_of(doc["bound"]["exact"]["upper"]), doc


def claims_file(tmp_path, body: str, name: str = "claims.toml") -> str:
    p = tmp_path / name
    p.write_text(f'[models]\ndemo = "{DEMO}"\n\n' + textwrap.dedent(body))
    return str(p)


def claim(cid: str, quantity: str, relation: str, value: str, extra: str = "") -> str:
    return (f'[[claim]]\nid = "{cid}"\nmodel = "demo"\nquantity = \'{quantity}\'\nrelation = "{relation}"\n'
            f'value = "{value}"\n{extra}\n')


def audit_cli(tmp_path, path: str, capsys) -> tuple[int, dict]:
    out = tmp_path / "audit.json"
    code = main(["audit", path, "--json", str(out), "--quiet"])
    capsys.readouterr()
    return code, {c["id"]: c for c in json.loads(out.read_text())["claims"]} if out.exists() else {}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The CLI's bound for n = 1000, δ = 0.01 (exact ends)."""
    lo, hi, doc = cli_bound(tmp_path_factory.mktemp("ref"), "--n", "1000", "--delta", "0.01")
    assert 0 < lo <= hi
    return lo, hi, doc


# ----------------------------------------------------------------------------------------- tests


def test_true_claims_are_confirmed(tmp_path, capsys, reference):
    lo, hi, _ = reference
    down6, _ = sig_floor(lo, 6)
    up6, _ = sig_ceil(hi, 6)
    # "=" at 3 digits: the 3-digit cell around lo must contain hi too, away from its ties
    r3, ulp3 = sig_floor(lo + sig_floor(lo, 3)[1] / 2, 3)  # round half up of lo
    assert r3 - ulp3 / 2 < lo and hi < r3 + ulp3 / 2
    path = claims_file(tmp_path, claim("ge", "bound(n=1000, delta=0.01)", ">=", dec(down6))
                       + claim("le", 'bound(n="1e3", delta="0.01")', "<=", dec(up6))
                       + claim("eq3", "bound(n=10**3, delta=1/100)", "=", dec(r3), "digits = 3"))
    code, verdicts = audit_cli(tmp_path, path, capsys)
    assert code == 0
    assert {k: v["status"] for k, v in verdicts.items()} == {"ge": "confirmed", "le": "confirmed", "eq3": "confirmed"}


def test_false_by_one_unit_in_the_last_digit_is_refuted(tmp_path, capsys, reference):
    lo, hi, _ = reference
    down6, ulp6 = sig_floor(lo, 6)
    up6, ulp6u = sig_ceil(hi, 6)
    r3, ulp3 = sig_floor(lo + sig_floor(lo, 3)[1] / 2, 3)
    assert hi < down6 + ulp6 and up6 - ulp6u < lo  # the ball does not straddle a 6-digit boundary
    path = claims_file(tmp_path, claim("ge+1", "bound(n=1000, delta=0.01)", ">=", dec(down6 + ulp6))
                       + claim("le-1", "bound(n=1000, delta=0.01)", "<=", dec(up6 - ulp6u))
                       + claim("eq3+1", "bound(n=1000, delta=0.01)", "=", dec(r3 + ulp3), "digits = 3")
                       + claim("eq3-1", "bound(n=1000, delta=0.01)", "=", dec(r3 - ulp3), "digits = 3"))
    code, verdicts = audit_cli(tmp_path, path, capsys)
    assert code == 1
    assert {v["status"] for v in verdicts.values()} == {"refuted"}


def test_enclosure_is_the_cli_bound_and_terms_add_up(tmp_path, reference):
    lo, hi, doc = reference
    q = "n=1000, delta=0.01"
    body = (claim("b", f"bound({q})", ">", "0")
            + claim("sum", f"2*rademacher({q}) + confidence_term({q}) - bound({q})", "≈", "0", 'tolerance = "1e-25"')
            # the confidence term's formula, re-derived: B_L sqrt((ln(2/δ) + ln(1/prior)) / (2n)), B_L = 4
            + claim("conf", f"confidence_term({q}) - 4*sqrt((log(2/0.01) + log_inv_prior({q})) / 2000)", "≈", "0",
                    'tolerance = "1e-25"'))
    vs = {v.claim.id: v for v in audit_claims(load_claims(claims_file(tmp_path, body)))}
    assert (lower_fraction(vs["b"].enclosure), upper_fraction(vs["b"].enclosure)) == (lo, hi)
    assert vs["sum"].status == "confirmed" and vs["conf"].status == "confirmed"
    for field in ("rademacher", "dudley", "confidence_term", "log_inv_prior"):
        v = audit_claims(load_claims(claims_file(tmp_path, claim(field, f"{field}({q})", ">=", "0"))))[0]
        assert (lower_fraction(v.enclosure), upper_fraction(v.enclosure)) == (
            exact_of(doc[field]["exact"]["lower"]), exact_of(doc[field]["exact"]["upper"])), field


def test_keyword_options_mirror_the_cli_flags(tmp_path):
    lo, hi, _ = cli_bound(tmp_path, "--n", "1e6", "--delta", "0.05", "--seq-len", "50", "--loss-bound", "8",
                          "--loss-lipschitz", "3/2", "--readout-norm", "8", "--softmax-lip", "2")
    q = ('bound(n=1e6, delta=0.05, seq_len=50, loss_bound=8, loss_lipschitz=1.5, readout_norm="8", '
         'softmax_lip=2)')
    v = audit_claims(load_claims(claims_file(tmp_path, claim("opts", q, ">", "0"))))[0]
    assert v.status == "confirmed"
    assert (lower_fraction(v.enclosure), upper_fraction(v.enclosure)) == (lo, hi)


def test_numbers_are_read_exactly_never_through_a_float(tmp_path):
    lo, hi, _ = cli_bound(tmp_path, "--n", "1000", "--delta", "0.1")
    # the binary64 number nearest to 0.1, written out exactly: a different δ, a different bound
    lo_f, hi_f, _ = cli_bound(tmp_path, "--n", "1000", "--delta", str(Fraction(0.1)))
    assert (lo, hi) != (lo_f, hi_f)
    for q in ("bound(n=1000, delta=0.1)", 'bound(n=1000, delta="0.1")', "bound(n=1000, delta=1/10)"):
        v = audit_claims(load_claims(claims_file(tmp_path, claim("d", q, ">", "0"))))[0]
        assert (lower_fraction(v.enclosure), upper_fraction(v.enclosure)) == (lo, hi), q
    # values no binary64 number (and no shortest float repr) reproduces
    for cli_delta, q in (("1/3", "bound(n=1000, delta=1/3)"),
                         ("0.0100000000000000000001", 'bound(n=1000, delta="0.0100000000000000000001")')):
        lo, hi, _ = cli_bound(tmp_path, "--n", "1000", "--delta", cli_delta)
        v = audit_claims(load_claims(claims_file(tmp_path, claim("d", q, ">", "0"))))[0]
        assert (lower_fraction(v.enclosure), upper_fraction(v.enclosure)) == (lo, hi), q


def test_one_bound_per_model_and_options(tmp_path, monkeypatch, reference):
    import certbound.audit._bound_quantities as bound_q

    calls = []
    real = bound_q.certified_bound

    def counting(model, n, delta, *a, **kw):
        calls.append((n, delta))
        return real(model, n, delta, *a, **kw)

    monkeypatch.setattr(bound_q, "certified_bound", counting)
    body = (claim("a", "bound(n=1000, delta=0.01)", ">", "0")
            + claim("b", 'bound(n="1e3", delta="0.01") - 2*rademacher(n=10**3, delta=0.01)', ">", "0")
            # undecidable at any precision (the claimed value is the ball's own lower end): escalates
            # through every level, but the bound is computed once and does not move with the precision
            + claim("c", "bound(n=1000, delta=0.01)", "<=", dec(reference[0]))
            + claim("d", "bound(n=1000, delta=0.02)", ">", "0"))
    verdicts = audit_claims(load_claims(claims_file(tmp_path, body)), max_prec=1024, max_mode="arb")
    assert [v.status for v in verdicts] == ["confirmed", "confirmed", "undecided", "confirmed"]
    assert verdicts[2].bits > 128  # it did escalate
    assert (lower_fraction(verdicts[2].enclosure), upper_fraction(verdicts[2].enclosure)) == reference[:2]
    assert len(calls) == 2, calls


@pytest.mark.parametrize("quantity, message", [
    ("bound(n=1000, delta=0.01, seqlen=14)", "no argument 'seqlen'"),
    ("bound(n=1000)", "needs argument(s) delta"),
    ('bound(n="1e3x", delta=0.01)', "is not an exact number"),
    ("bound(n=1000, delta=0.01, spectrum_mode=1)", "takes a string"),
])
def test_bad_claims_are_input_errors(tmp_path, capsys, quantity, message):
    path = claims_file(tmp_path, claim("bad", quantity, "<=", "1"))
    assert main(["audit", path]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("quantity, message", [
    ("bound(n=1000, delta=2)", "delta must lie in (0, 1)"),
    ("bound(n=1000.5, delta=0.01)", "n must be a positive integer"),
    ("bound(n=1000, delta=1/exp(3))", "must be an exact number"),
    ("bound(n=1000, delta=0.01, residual=1)", "no residual connections"),
    ("bound(n=1000, delta=0.01, loss_bound=1)", "below the certbound-pi config"),
])
def test_bad_options_are_errors_with_exit_2(tmp_path, capsys, quantity, message):
    code, verdicts = audit_cli(tmp_path, claims_file(tmp_path, claim("bad", quantity, "<=", "1")), capsys)
    assert code == 2
    assert verdicts["bad"]["status"] == "error" and message in verdicts["bad"]["reason"]


def test_functions_listing_documents_the_bound_quantities(capsys):
    assert main(["audit", "--functions", "x"]) == 0
    out = capsys.readouterr().out
    for name in ("bound", "rademacher", "dudley", "confidence_term", "log_inv_prior"):
        assert f"\n  {name} " in out
    assert "loss_lipschitz" in out and "Theorem 2" in out


def test_example_claims_file_passes(capsys):
    example = Path(__file__).resolve().parents[2] / "examples" / "audit" / "demo_bound_claims.toml"
    assert main(["audit", str(example)]) == 0
    capsys.readouterr()
