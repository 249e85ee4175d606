"""The pipeline layer: model → certified spectra → certified bounds, with typed options.

It owns the orchestration that the CLI commands, :mod:`certbound.audit` and
notebooks share: it sits above :mod:`certbound.checkpoints`,
:mod:`certbound.enclose`, :mod:`certbound.bounds` and :mod:`certbound.models`
and below the CLI (``certbound._commands``), which only parses arguments,
calls into this package and renders. No function here takes an
``argparse.Namespace``; options are keyword arguments or
:class:`BoundSettings`, and progress goes through one callback
(:mod:`certbound.pipeline._progress`).

>>> from certbound.pipeline import BoundSettings
>>> BoundSettings(seq_len=128).seq_len
128
"""

from certbound._errors import OptionError
from certbound.pipeline._bound import (
    BoundSettings,
    certified_bound,
    model_spectra,
    parse_count,
    parse_number,
    spec_from_layout,
    spectra_from_report,
)
from certbound.pipeline._hub import hub_cache_dir, resolve_hub_id
from certbound.pipeline._model import Model, open_model, parse_schatten_indices
from certbound.pipeline._modes import DEFAULT_SPECTRUM_MODE, SPECTRUM_MODES, check_spectrum_mode
from certbound.pipeline._results import BoundResult, MatrixSpectrum, ProxiesReport, SpectrumReport, bound_latex
from certbound.pipeline._covering import covering_report
from certbound.pipeline._demo import DEFAULT_DELTA, DemoResult, NonVacuity, nonvacuous_sample_size, run_demo
from certbound.pipeline._progress import ProgressCallback, TerminalProgress, progress_reporter
from certbound.pipeline._proxies import model_quantities
from certbound.pipeline._resolve import resolve_model, resolve_model_name, resolve_packaged_name
from certbound.pipeline._sweep import MINIATURE_L, MINIATURE_N, run_sweep
from certbound.pipeline._spectrum import (
    SpectrumRun,
    certify_theory_matrix,
    scaled_enclosure,
    spectrum_report,
    spectrum_run,
    spectrum_store_settings,
    weights_digest,
)

__all__ = [
    "open_model",
    "Model",
    "SpectrumReport",
    "MatrixSpectrum",
    "BoundResult",
    "ProxiesReport",
    "bound_latex",
    "SPECTRUM_MODES",
    "DEFAULT_SPECTRUM_MODE",
    "check_spectrum_mode",
    "OptionError",
    "parse_schatten_indices",
    "hub_cache_dir",
    "resolve_hub_id",
    "BoundSettings",
    "certified_bound",
    "model_spectra",
    "spec_from_layout",
    "spectra_from_report",
    "parse_count",
    "parse_number",
    "spectrum_report",
    "spectrum_run",
    "SpectrumRun",
    "spectrum_store_settings",
    "certify_theory_matrix",
    "scaled_enclosure",
    "weights_digest",
    "model_quantities",
    "run_sweep",
    "covering_report",
    "MINIATURE_L",
    "MINIATURE_N",
    "run_demo",
    "DemoResult",
    "NonVacuity",
    "nonvacuous_sample_size",
    "DEFAULT_DELTA",
    "ProgressCallback",
    "TerminalProgress",
    "progress_reporter",
    "resolve_model",
    "resolve_model_name",
    "resolve_packaged_name",  # deprecated alias of resolve_model_name
]
