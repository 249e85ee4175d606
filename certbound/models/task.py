"""The demo task: sparse majority over a few hidden positions (no downloads).

A sequence has ``seq_len`` rows: row 0 is the [CLS] token, rows 1..T−1 carry
binary symbols. The label is the majority vote of the symbols at ``k`` hidden
positions (chosen once from the task seed), flipped with probability
``label_noise``. This is the "sparse variable" setting that motivated
norm-based attention bounds (Edelman et al. 2022): the label depends on a few
positions of a long sequence, and attention has to find them.

Embedding (fixed, not learned; every row has Euclidean norm exactly 1, so the
data satisfy assumption (A1) of the specification (restated in ``proofs/theory-lipschitz.md`` §1.1)):

* width N = 2 + T: two coordinates for the symbol (one-hot) and T for the
  position (one-hot);
* a symbol row at position t is (e_symbol, e_t)/√2; the [CLS] row is (0, e_0).

All randomness comes from the raw 64-bit stream of ``numpy.random.PCG64``
(``random_raw``), whose output is fixed by the seed across numpy versions
(unlike ``Generator`` methods), so the data sets are the same everywhere.
Example i of a stream uses the words T·i … T·i + T − 1 of that stream
(T − 1 symbol bits and one label-noise word), so any slice of a data set can
be regenerated on its own (``PCG64.advance``): training streams minibatches
and ``certbound demo`` recomputes R̂ over n = 10⁶ samples in chunks, neither
ever holding the whole set.

The input space has 2^(T−1) elements (the [CLS] row is fixed); with the
default T = 41 that is 2⁴⁰ ≈ 1.1·10¹², far more than any training set used
here, so a bound that counts the inputs (:meth:`SparseMajorityTask.input_counting_bound`)
is vacuous.

Examples
--------
>>> task = SparseMajorityTask(seq_len=8, n_relevant=3, seed=0)
>>> X, y = task.sample(5, stream=1)
>>> X.shape, y.shape
((5, 8, 10), (5,))
>>> bool(np.allclose(np.linalg.norm(X, axis=-1), 1.0))
True
>>> sorted(set(y.tolist())) <= [-1.0, 1.0]
True
>>> np.array_equal(task.sample(5, stream=1)[0], X)   # deterministic
True
>>> np.array_equal(task.sample(3, stream=1, start=2)[0], X[2:])   # any slice on its own
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["SparseMajorityTask", "raw_uniform_bits"]


def raw_uniform_bits(seed: int, stream: int, count: int, start: int = 0) -> np.ndarray:
    """Words ``start … start + count − 1`` of the raw uint64 PCG64 stream seeded by (seed, stream).

    Stable across numpy versions; ``start`` jumps ahead with ``PCG64.advance``
    (O(log start)), so a slice equals the same slice of one long draw.

    >>> raw_uniform_bits(0, 0, 2).dtype
    dtype('uint64')
    >>> bool(np.array_equal(raw_uniform_bits(0, 3, 4, start=6), raw_uniform_bits(0, 3, 10)[6:]))
    True
    """
    if count < 0 or start < 0:
        raise ValueError(f"count and start must be ≥ 0, got count={count}, start={start}")
    gen = np.random.PCG64(np.random.SeedSequence([int(seed), int(stream)]))
    if start:
        gen.advance(int(start))
    return gen.random_raw(int(count)).astype(np.uint64)


@dataclass(frozen=True)
class SparseMajorityTask:
    """Sparse-majority classification task; labels in {−1, +1}.

    Parameters
    ----------
    seq_len : int
        T, rows per input including [CLS] at row 0 (T ≥ n_relevant + 1).
    n_relevant : int
        k, the number of hidden positions (odd, so the majority is defined).
    label_noise : float
        Probability that a label is flipped (makes the Bayes risk positive).
    seed : int
        Fixes the hidden positions; data sets use (seed, stream).
    """

    seq_len: int = 41
    n_relevant: int = 3
    label_noise: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        if self.n_relevant < 1 or self.n_relevant % 2 == 0:
            raise ValueError(f"task n_relevant must be a positive odd integer, got {self.n_relevant}")
        if self.seq_len < self.n_relevant + 1:
            raise ValueError(f"task seq_len={self.seq_len} is too short for {self.n_relevant} hidden positions")
        if not 0 <= self.label_noise < 0.5:
            raise ValueError(f"task label_noise must be in [0, 0.5), got {self.label_noise}")

    @property
    def d_model(self) -> int:
        """Embedding width N = 2 + T."""
        return 2 + self.seq_len

    @property
    def relevant_positions(self) -> tuple[int, ...]:
        """The k hidden positions (in 1..T−1), fixed by the seed (Fisher–Yates on raw bits)."""
        cand = list(range(1, self.seq_len))
        bits = raw_uniform_bits(self.seed, 0, len(cand))
        for i in range(len(cand) - 1, 0, -1):
            j = int(bits[i] % np.uint64(i + 1))
            cand[i], cand[j] = cand[j], cand[i]
        return tuple(sorted(cand[: self.n_relevant]))

    def embed(self, symbols: np.ndarray) -> np.ndarray:
        """Embed symbols (n, T−1) in {0, 1} as inputs (n, T, N) with unit rows."""
        symbols = np.asarray(symbols)
        n, t1 = symbols.shape
        if t1 != self.seq_len - 1:
            raise ValueError(f"symbols have {t1} positions, task expects {self.seq_len - 1}")
        X = np.zeros((n, self.seq_len, self.d_model))
        X[:, 0, 2] = 1.0  # [CLS] = (0, 0, e_0)
        r = 1.0 / math.sqrt(2.0)
        rows = np.arange(1, self.seq_len)
        X[:, rows, 2 + rows] = r
        X[:, rows, 0] = np.where(symbols == 0, r, 0.0)
        X[:, rows, 1] = np.where(symbols == 1, r, 0.0)
        return X

    def label(self, symbols: np.ndarray) -> np.ndarray:
        """Noise-free labels: +1 if most hidden positions hold symbol 1, else −1."""
        idx = np.array(self.relevant_positions) - 1
        ones = np.asarray(symbols)[:, idx].sum(axis=1)
        return np.where(2 * ones > self.n_relevant, 1.0, -1.0)

    def symbols_and_labels(self, n: int, stream: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Examples ``start … start + n − 1`` of stream ``stream`` as (symbols (n, T−1) int8, labels (n,)).

        The compact form (T−1 bytes per example); :meth:`embed` turns symbols into inputs.
        """
        if stream < 1:
            raise ValueError("data streams start at 1 (stream 0 chooses the hidden positions)")
        if n < 0 or start < 0:
            raise ValueError(f"n and start must be ≥ 0, got n={n}, start={start}")
        t1 = self.seq_len - 1
        bits = raw_uniform_bits(self.seed, stream, n * (t1 + 1), start=start * (t1 + 1)).reshape(n, t1 + 1)
        symbols = (bits[:, :t1] >> np.uint64(63)).astype(np.int8)
        # Flip with probability label_noise: compare the top 53 bits with the threshold.
        u = (bits[:, t1] >> np.uint64(11)).astype(np.float64) * 2.0**-53
        y = self.label(symbols)
        y = np.where(u < self.label_noise, -y, y)
        return symbols, y

    def sample(self, n: int, stream: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Examples ``start … start + n − 1`` of stream ``stream`` (streams ≥ 1; 0 fixes the positions).

        Returns (X (n, T, N) float64 inputs with unit rows, y (n,) in {−1, +1}).
        """
        symbols, y = self.symbols_and_labels(n, stream, start)
        return self.embed(symbols), y

    def batches(self, n: int, stream: int, batch_size: int):
        """Yield ``(start, X, y)`` covering examples 0 … n − 1 of a stream, ``batch_size`` at a time.

        >>> task = SparseMajorityTask(seq_len=5, seed=0)
        >>> [(s, len(y)) for s, _, y in task.batches(5, 1, 2)]
        [(0, 2), (2, 2), (4, 1)]
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be ≥ 1, got {batch_size}")
        for start in range(0, n, batch_size):
            X, y = self.sample(min(batch_size, n - start), stream, start)
            yield start, X, y

    @property
    def input_space_size(self) -> int:
        """|𝒳| = 2^(T−1): the number of distinct inputs (the [CLS] row is fixed)."""
        return 2 ** (self.seq_len - 1)

    def input_counting_bound(self, n: int, delta: Any) -> Any:
        """The trivial bound that counts the input space: √((|𝒳| ln 2 + ln(1/δ)) / (2n)) as an Arb ball.

        With probability ≥ 1 − δ, *every* classifier h: 𝒳 → {−1, +1} satisfies
        P(h errs) ≤ R̂₀₁(h) + this (Hoeffding for each of the 2^|𝒳| classifiers
        and a union bound; ``proofs/demo-task.md`` §1). It needs no
        property of the network, so a certificate is informative only where it
        beats this number; at |𝒳| ≫ n it exceeds 1.

        >>> from fractions import Fraction
        >>> b = SparseMajorityTask(seq_len=41).input_counting_bound(10**6, Fraction(1, 100))
        >>> float(b.mid()) > 100
        True
        """
        from fractions import Fraction

        from flint import arb, ctx

        if not (isinstance(n, (int, np.integer)) and n >= 1):
            raise ValueError(f"n must be a positive integer, got {n!r}")
        q = Fraction(delta)
        if not 0 < q < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta}")
        old = ctx.prec
        ctx.prec = 128
        try:
            d = arb(q.numerator) / q.denominator
            return ((arb(self.input_space_size) * arb(2).log() - d.log()) / (2 * arb(int(n)))).sqrt()
        finally:
            ctx.prec = old

    def bayes_risk_01(self) -> float:
        """The 0-1 Bayes risk (= label_noise)."""
        return float(self.label_noise)

    def to_json_dict(self) -> dict[str, Any]:
        return {"name": "sparse-majority", **asdict(self),
                "relevant_positions": list(self.relevant_positions)}

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> "SparseMajorityTask":
        if d.get("name", "sparse-majority") != "sparse-majority":
            raise ValueError(f"unknown task {d.get('name')!r} (certbound knows 'sparse-majority')")
        return cls(seq_len=int(d["seq_len"]), n_relevant=int(d["n_relevant"]),
                   label_noise=float(d["label_noise"]), seed=int(d["seed"]))
