"""End-to-end audits: true / false-by-one-unit / undecidable claims, bad files, exit codes, outputs."""

import json
import textwrap
from decimal import Decimal
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from certbound.audit import audit_claims, decide, parse_claims
from certbound.cli import main


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 2-layer BERT-shaped float32 checkpoint with a known M_in spectrum (layer 1)."""
    from safetensors.numpy import save_file

    d = tmp_path_factory.mktemp("tiny")
    rng = np.random.default_rng(7)
    n, ff = 8, 16
    w = {}
    for layer in range(2):
        for k, s in [("attention.self.query", (n, n)), ("attention.self.key", (n, n)),
                     ("attention.self.value", (n, n)), ("attention.output.dense", (n, n)),
                     ("intermediate.dense", (ff, n)), ("output.dense", (n, ff))]:
            w[f"encoder.layer.{layer}.{k}.weight"] = rng.standard_normal(s).astype(np.float32)
    # Layer 1's FFN input matrix: diagonal with exactly known singular values 3, 2, 1, 0.5, ...
    m = np.zeros((ff, n), dtype=np.float32)
    m[np.arange(n), np.arange(n)] = [3, 2, 1, 0.5, 0.25, 0.125, 0.0625, 0.03125]
    w["encoder.layer.1.intermediate.dense.weight"] = m
    save_file(w, str(d / "model.safetensors"))
    cfg = {"model_type": "bert", "hidden_size": n, "num_attention_heads": 2, "num_hidden_layers": 2,
           "intermediate_size": ff}
    (d / "config.json").write_text(json.dumps(cfg))
    # Independent reference: σ₁ of layer 0's M_in in 300-bit mpmath.
    mpmath.mp.prec = 300
    a = mpmath.matrix(w["encoder.layer.0.intermediate.dense.weight"].astype(np.float64).T.tolist())
    s1 = max(mpmath.svd_r(a, compute_uv=False))
    return d, s1


def run_cli(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, text, name="claims.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def digits_of(x, n):
    """x rounded to n significant digits as a decimal string (independent of certbound)."""
    return mpmath.nstr(x, n, strip_zeros=False, min_fixed=-30, max_fixed=30)


def test_true_false_and_undecidable_model_claims(tiny_model, tmp_path, capsys):
    d, s1 = tiny_model
    true6 = digits_of(s1, 6)
    # One unit in the last printed digit off (reference rounding, independent of the code).
    last = Decimal(true6).as_tuple().exponent
    off = str(Decimal(true6) + Decimal(1).scaleb(last))
    # 17 digits: finer than the enclosure from float64 singular vectors (~1e-15 relative).
    true17 = digits_of(s1, 17)
    claims = f"""
    [models]
    tiny = "{d}"

    [[claim]]
    id = "true"
    model = "tiny"
    quantity = 'sigma(layer=0, type="M_in", i=1)'
    relation = "="
    value = "{true6}"

    [[claim]]
    id = "off-by-one-unit"
    model = "tiny"
    quantity = 'sigma(layer=0, type="M_in", i=1)'
    relation = "="
    value = "{off}"

    [[claim]]
    id = "undecidable"
    model = "tiny"
    quantity = 'spectral_norm(layer=0, type="M_in")'
    relation = "="
    value = "{true17}"

    [[claim]]
    id = "equality-bound"
    model = "tiny"
    quantity = 'sigma(layer=1, type="M_in", i=1)'
    relation = "<"
    value = "3"

    [[claim]]
    id = "sum-heads"
    model = "tiny"
    quantity = 'sum(spectral_norm(layer=l, head=h, type="QK") for l in layers for h in heads) / (num_layers() * num_heads())'
    relation = ">"
    value = "0"
    """
    path = write(tmp_path, claims)
    code, out, err = run_cli(["audit", path, "--json", str(tmp_path / "r.json"), "--markdown", str(tmp_path / "r.md")], capsys)
    report = json.loads((tmp_path / "r.json").read_text())
    status = {c["id"]: c["status"] for c in report["claims"]}
    assert status["true"] == "confirmed"
    assert status["off-by-one-unit"] == "refuted"
    assert status["undecidable"] == "undecided"
    # σ₁ = 3 exactly; "< 3" is false, but a float-based certificate cannot refute it unless it is exact.
    assert status["equality-bound"] in ("undecided", "refuted")
    assert status["sum-heads"] == "confirmed"
    assert code == 1
    und = next(c for c in report["claims"] if c["id"] == "undecidable")
    assert "float32" in und["reason"] and "rounding boundary" in und["reason"]
    # The enclosure printed beside the claim contains the reference value.
    enc = next(c for c in report["claims"] if c["id"] == "true")["enclosure"]
    assert mpmath.mpf(enc["lower"]) <= s1 <= mpmath.mpf(enc["upper"])
    md = (tmp_path / "r.md").read_text()
    assert "| true |" in md and "**refuted**" in md
    assert "REFUTED" in out and "CONFIRMED" in out


def test_exit_zero_when_nothing_refuted(tmp_path, capsys):
    path = write(tmp_path, """
    [constants]
    n = "1e6"
    delta = "0.01"
    [[claim]]
    id = "bound"
    quantity = "sqrt(log(2 * sqrt(n) / delta) / (2 * n))"
    relation = "<="
    value = "0.0029"
    [[claim]]
    id = "kl"
    quantity = "kl_inv_upper(0.05, log(2 * sqrt(n) / delta) / n)"
    relation = "≈"
    value = "0.0511"
    tolerance = "0.0001"
    """)
    code, out, _ = run_cli(["audit", path], capsys)
    assert code == 0, out
    assert out.count("CONFIRMED") == 2


@pytest.mark.parametrize(
    "body, message",
    [
        ('quantity = "sigmaa(layer=0, type=\\"M_in\\", i=1)"\nrelation = "<="\nvalue = "1"', "unknown function or quantity 'sigmaa'"),
        ('quantity = "1 + * 2"\nrelation = "<="\nvalue = "1"', "column 5"),
        ('quantity = "1"\nrelation = "<="\nvalue = "1"\nmodel = "no/such/model"', "model file or directory not found"),
        ('quantity = "1"\nrelation = "=<"\nvalue = "1"', "unknown relation"),
        ('quantity = "1"\nrelation = "<="\nvalue = "1.2.3"', "not a decimal number"),
        ('quantity = "1"\nrelation = "="\nvalue = "12.34"\ndigits = 2', "more than 2 significant digits"),
        ('quantity = "1"\nrelation = "<="\nvalue = "1"\ntolerence = "1"', "did you mean 'tolerance'"),
        ('quantity = "spectral_norm(layer=0, type=\\"M_in\\")"\nrelation = "<="\nvalue = "1"', "needs a model"),
    ],
)
def test_bad_claims_files_exit_2_with_clear_errors(tmp_path, capsys, body, message):
    path = write(tmp_path, "[[claim]]\nid = \"x\"\n" + body + "\n")
    code, out, err = run_cli(["audit", path], capsys)
    assert code == 2
    assert message in err
    assert "claim 1 ('x')" in err or "[models]" in err


def test_invalid_toml_and_missing_file(tmp_path, capsys):
    code, _, err = run_cli(["audit", write(tmp_path, "[[claim]\nid=1")], capsys)
    assert code == 2 and "not valid TOML" in err
    code, _, err = run_cli(["audit", str(tmp_path / "nope.toml")], capsys)
    assert code == 2 and "nope.toml" in err


def test_runtime_domain_error_is_status_error(tmp_path, capsys):
    path = write(tmp_path, '[[claim]]\nid = "neg"\nquantity = "log(1 - 2)"\nrelation = "<="\nvalue = "1"\n')
    code, out, _ = run_cli(["audit", path], capsys)
    assert code == 2 and "ERROR" in out and "non-positive" in out


def _claim(relation, value, **opts):
    extra = "".join(f"\n{k} = {v!r}" if isinstance(v, str) else f"\n{k} = {v}" for k, v in opts.items())
    return parse_claims(f'[[claim]]\nquantity = "1"\nrelation = "{relation}"\nvalue = "{value}"{extra}').claims[0]


@pytest.mark.parametrize(
    "relation, value, lo, hi, expected",
    [
        ("<=", "0.37", "0.37", "0.37", "confirmed"),   # exact value on the boundary
        ("<", "0.37", "0.37", "0.37", "refuted"),
        ("<", "0.37", "0.3", "0.37", "undecided"),
        ("<", "0.37", "0.371", "0.4", "refuted"),
        ("<=", "0.37", "0.36", "0.38", "undecided"),
        ("<=", "0.37", "0.371", "0.38", "refuted"),
        (">=", "2", "2", "2", "confirmed"),
        (">=", "2", "2.001", "3", "confirmed"),
        (">", "2", "2", "2", "refuted"),
        (">", "2", "1", "1.999", "refuted"),
        ("=", "10.0", "9.996", "9.999", "confirmed"),   # 9.996 rounds to 10.0 at 3 digits
        ("=", "10.0", "9.99", "9.994", "refuted"),      # 9.99 rounds to itself
        ("=", "12.3", "12.35", "12.35", "undecided"),   # a tie: depends on the rounding rule
        ("=", "12.3", "12.351", "12.36", "refuted"),
    ],
)
def test_decision_rules_on_exact_intervals(relation, value, lo, hi, expected):
    status, _ = decide(_claim(relation, value), Fraction(lo) if lo == hi else _interval(lo, hi))
    assert status == expected


def _interval(lo, hi):
    from flint import arb, fmpq

    a, b = Fraction(lo), Fraction(hi)
    # Exact dyadic-free interval: take a ball slightly larger than [a, b] only if a, b are not dyadic;
    # all values used above are checked against the claim's boundary with margin, except exact ends.
    from certbound.ball import working_precision

    with working_precision(4096):
        return arb(fmpq(a.numerator, a.denominator)).union(arb(fmpq(b.numerator, b.denominator)))


def test_tolerance_claims():
    c = _claim("≈", "0.05", tolerance="0.001")
    assert decide(c, Fraction("0.0505"))[0] == "confirmed"
    assert decide(c, Fraction("0.0511"))[0] == "refuted"
    c = _claim("≈", "100", rel_tolerance="0.01")
    assert decide(c, Fraction(101))[0] == "confirmed"


def test_precision_escalation_decides_close_claims():
    # Decided only with more than 128 bits (~38 digits): the values differ from sqrt(2) at the 50th digit.
    # sqrt(2) = 1.41421356237309504880168872420969807856967187537694 8...
    up = "1.4142135623730950488016887242096980785696718753770"
    down = "1.4142135623730950488016887242096980785696718753769"
    cf = parse_claims(f'[[claim]]\nid = "u"\nquantity = "sqrt(2)"\nrelation = "<="\nvalue = "{up}"\n'
                      f'[[claim]]\nid = "d"\nquantity = "sqrt(2)"\nrelation = "<="\nvalue = "{down}"')
    u, d = audit_claims(cf)
    assert u.status == "confirmed" and u.bits > 128
    assert d.status == "refuted" and d.bits > 128
