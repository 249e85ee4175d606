"""certbound: certified generalization-bound numbers for trained Transformers.

Pipeline: checkpoint → matrices (:mod:`certbound.checkpoints`) → certified
spectra (:mod:`certbound.enclose`) → certified quantities and bounds
(:mod:`certbound.bounds`) → reports. Every reported bound is an Arb ball
(python-flint) whose upper end is a proven upper bound.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
