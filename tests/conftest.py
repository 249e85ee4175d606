"""Shared pytest configuration: Hypothesis profiles.

``ci`` (default): derandomised, no deadline, modest example counts, so CI is
reproducible and fits its time budget. ``thorough``: many more examples; pick
it with ``CERTBOUND_HYPOTHESIS_PROFILE=thorough pytest``.
"""

import os

# One BLAS thread for the tests' *own* numpy calls (references, fixtures,
# torch-free model code): certbound chooses its threads per call itself
# (certbound._blas), but the tests call numpy directly too, and on a shared
# 2-core machine threaded OpenBLAS made those 10-100x slower (measured).
# Kept deliberately; must be set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=1000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("CERTBOUND_HYPOTHESIS_PROFILE", "ci"))
