"""run_demo reads a float δ as the smaller of its binary and decimal values (proofs/pipeline.md §1)."""

from fractions import Fraction

import pytest

from certbound.pipeline import _demo


class _Stop(Exception):
    pass


def test_float_delta_is_certified_at_the_smaller_reading(monkeypatch):
    seen = []

    def capture(net, spectra, readout, n, delta, options):
        seen.append(delta)
        raise _Stop

    monkeypatch.setattr(_demo, "pi_model_bound", capture)
    with pytest.raises(_Stop):
        _demo.run_demo(delta=0.01, n=1000, search_nonvacuous=False)
    # binary64 0.01 is 0.01000000000000000020…: certifying at it would overstate "probability ≥ 0.99"
    assert Fraction(seen[0]) == Fraction(1, 100) and Fraction(seen[0]) < Fraction(0.01)
