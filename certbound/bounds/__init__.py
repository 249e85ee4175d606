"""The theory in Arb: covering numbers, network factors, chaining, Theorems 1 and 2.

Every public function that returns a bound returns an ``flint.arb`` ball whose
upper endpoint is a proven upper bound; each names the section of
``proofs/theory-*.md`` it implements (spec: ``explicit-bound.md``).

Main entry points
-----------------
* :func:`theorem2_posthoc_bound` — the certified post hoc bound for trained
  weights (certified spectra per matrix), p searched per matrix.
* :func:`theorem1_fixed_bound` — the bound for a configuration fixed a priori.
* :func:`log_cover_linear_map` — Lemma A (explicit Theorem 4.1) for one matrix.
* :class:`TransformerSpec` — the model class (variants P/B, residual, constants).
* :func:`diameter_bound`, :func:`one_step_bound` — Lemmas C0 and C2 (the reported Rademacher
  term is the minimum of these and the Dudley sum, ``BoundResult.rademacher``).
* :func:`ramp_loss_constants`, :func:`empirical_ramp_loss_upper`, :func:`zero_one_error_bound` —
  the ramp loss and the certified 0-1 test error (Corollary T3).

``certbound.bounds.proxies`` (the authors' proxies) is a separate module,
imported explicitly.
"""

from certbound.bounds._closed_form import corollary_b2, proposition_a3
from certbound.bounds._covering import (
    CoverChoice,
    LinearMapClass,
    choose_cover,
    log_cover_linear_map,
    log_cover_rank_part,
    log_cover_tail,
    log_cover_tail_coord,
    log_cover_tail_vector,
    log_cover_tail_volume,
    split_rank,
    tail_radii,
)
from certbound.bounds._dudley import dudley_bound, dudley_cutoff, dudley_partition, upper_riemann_sum
from certbound.bounds._grids import (
    grid_round_up,
    grid_value,
    light_index_prior,
    light_rank_prior,
    light_spectral_prior,
    log_inv_prior,
    p_grid,
    p_grid_m,
    two_sided_log_inv_prior,
    two_sided_prior,
    two_sided_prior_mass,
)
from certbound.bounds._lipschitz import (
    alpha,
    attention_factor,
    ffn_factor,
    gamma,
    input_radius,
    layer_lip,
    paper_alpha,
    scale,
)
from certbound.bounds._margin import (
    combine_ramp_upper,
    empirical_ramp_loss_upper,
    ramp_loss,
    ramp_loss_constants,
    ramp_upper_from_violations,
    zero_one_error_bound,
)
from certbound.bounds._network_cover import READOUT_KEY, MatrixConstraint, NetworkConfiguration, alloc_weights
from certbound.bounds._rademacher import (
    certified_rademacher_minimum,
    diameter_bound,
    one_step_bound,
    one_step_cutoff,
)
from certbound.bounds._spec import MatrixSlot, TransformerSpec, activation_constants, gelu_lipschitz
from certbound.bounds._theorems import (
    BoundOptions,
    BoundResult,
    CertifiedSpectrum,
    MatrixReport,
    certified_spectrum,
    theorem1_fixed_bound,
    theorem2_posthoc_bound,
)

# Spec §7.2 names.
log_cover_network = NetworkConfiguration.log_cover_network
gap_bound_fixed = theorem1_fixed_bound
gap_bound_posthoc = theorem2_posthoc_bound

__all__ = [
    "TransformerSpec",
    "MatrixSlot",
    "gelu_lipschitz",
    "activation_constants",
    "LinearMapClass",
    "CoverChoice",
    "choose_cover",
    "log_cover_rank_part",
    "log_cover_tail_coord",
    "log_cover_tail_vector",
    "log_cover_tail_volume",
    "log_cover_tail",
    "split_rank",
    "tail_radii",
    "log_cover_linear_map",
    "attention_factor",
    "ffn_factor",
    "layer_lip",
    "alpha",
    "gamma",
    "input_radius",
    "scale",
    "paper_alpha",
    "MatrixConstraint",
    "NetworkConfiguration",
    "READOUT_KEY",
    "alloc_weights",
    "log_cover_network",
    "dudley_partition",
    "dudley_cutoff",
    "dudley_bound",
    "upper_riemann_sum",
    "p_grid_m",
    "p_grid",
    "grid_value",
    "grid_round_up",
    "two_sided_prior",
    "two_sided_prior_mass",
    "two_sided_log_inv_prior",
    "log_inv_prior",
    "BoundOptions",
    "BoundResult",
    "MatrixReport",
    "CertifiedSpectrum",
    "certified_spectrum",
    "theorem1_fixed_bound",
    "theorem2_posthoc_bound",
    "gap_bound_fixed",
    "gap_bound_posthoc",
    "proposition_a3",
    "corollary_b2",
    "diameter_bound",
    "one_step_bound",
    "one_step_cutoff",
    "certified_rademacher_minimum",
    "ramp_loss_constants",
    "ramp_loss",
    "empirical_ramp_loss_upper",
    "ramp_upper_from_violations",
    "combine_ramp_upper",
    "zero_one_error_bound",
    "light_index_prior",
    "light_rank_prior",
    "light_spectral_prior",
]
