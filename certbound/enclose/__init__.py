"""The numeric kernel: certified singular values and derived quantities.

Pure functions, no I/O, no torch: float arrays in, Arb balls out. Proofs in
``proofs/enclosure.md`` (``proofs/enclosure-tight.md`` for tight mode,
``proofs/enclosure-gram.md`` for gram mode: Theorems G and G-T).
"""

from certbound.enclose.product import enclose_singular_values_of_product, enclose_singular_values_of_products
from certbound.enclose.quantities import (
    frobenius_norm,
    norm_11,
    norm_11_of_product,
    norm_21,
    norm_21_of_product,
    nuclear_norm,
    schatten_quantity,
    spectral_norm,
    stable_rank,
)
from certbound.enclose.rank import exact_rank, rank_lower_bound_modp
from certbound.enclose.svd import (
    MODES,
    CertificateWarning,
    RankBounds,
    SingularValueEnclosure,
    enclose_singular_values,
)


def certified_rank(W, exact: bool = True) -> RankBounds:
    """Certified bounds on rank_ℚ(W) for a stored float matrix.

    ``exact=True``: the exact rank (fraction-free elimination over ℤ);
    ``exact=False``: ``[rank mod p, min(m, n)]`` — cheap, certified.

    Parameters
    ----------
    W : array_like
        A 2-D float64 matrix.
    exact : bool
        Exact rank (cost: exact integer elimination) or the cheap modular bounds.

    Returns
    -------
    RankBounds
        ``lower ≤ rank_ℚ(W) ≤ upper`` (equal when ``exact``).

    Examples
    --------
    >>> import numpy as np
    >>> certified_rank(np.array([[1.0, 2.0], [2.0, 4.0]]))
    RankBounds(lower=1, upper=1)
    """
    import numpy as np

    W = np.asarray(W)
    if exact:
        r = exact_rank(W)
        return RankBounds(r, r)
    return RankBounds(rank_lower_bound_modp(W), min(W.shape))


__all__ = [
    "MODES",
    "CertificateWarning",
    "RankBounds",
    "SingularValueEnclosure",
    "certified_rank",
    "enclose_singular_values",
    "enclose_singular_values_of_product",
    "enclose_singular_values_of_products",
    "exact_rank",
    "frobenius_norm",
    "norm_11",
    "norm_11_of_product",
    "norm_21",
    "norm_21_of_product",
    "nuclear_norm",
    "rank_lower_bound_modp",
    "schatten_quantity",
    "spectral_norm",
    "stable_rank",
]
