"""What a model argument names: an existing path, a packaged checkpoint's name, or a cached Hugging Face id.

Every command and library entry point that takes a model by name resolves it here, in the same order as
:func:`certbound.open_model`: an existing path wins, then a packaged checkpoint name (also as
``org/name``), then a Hugging Face model id already in the local cache (:mod:`certbound.pipeline._hub`;
never a download).
"""

from __future__ import annotations

import os
import warnings

from certbound.checkpoints import PACKAGED_CHECKPOINTS, find_packaged_checkpoint
from certbound.pipeline._hub import looks_like_hub_id, resolve_hub_id

__all__ = ["resolve_model_name", "resolve_model", "resolve_packaged_name"]


def _packaged_path(model: str) -> str:
    try:
        return str(find_packaged_checkpoint(model))
    except LookupError as exc:
        raise FileNotFoundError(str(exc)) from None


def resolve_model_name(model: str | os.PathLike[str]) -> str:
    """``model`` itself if it exists; else the packaged checkpoint or cached Hugging Face model it names.

    A packaged checkpoint name (``all-MiniLM-L6-v2``, also as
    ``sentence-transformers/all-MiniLM-L6-v2``) gives that checkpoint's path;
    a Hugging Face model id (``org/name`` or ``name``) the snapshot folder in the local
    cache. Anything else is returned unchanged (the loader then reports the
    missing file; :func:`resolve_model` raises instead).

    Parameters
    ----------
    model : str or path
        A path, a packaged checkpoint name, or a cached model id.

    Returns
    -------
    str
        The path to open.

    Raises
    ------
    FileNotFoundError
        When a packaged checkpoint's data package is not installed, or a
        model id is not in the local cache (naming the folder searched).

    Examples
    --------
    >>> resolve_model_name("no/such/dir")
    'no/such/dir'
    """
    model = os.fspath(model)
    if os.path.exists(model):
        return model
    if model.split("/")[-1] in PACKAGED_CHECKPOINTS:
        return _packaged_path(model)
    if looks_like_hub_id(model):
        return resolve_hub_id(model)
    return model


def resolve_model(spec: str | os.PathLike[str]) -> str:
    """A checkpoint path: an existing path, a packaged checkpoint's name, or a cached Hugging Face model id.

    Raises ``FileNotFoundError`` naming the possibilities when none works.

    Parameters
    ----------
    spec : str or path
        A path, a packaged checkpoint name, or a cached model id.

    Returns
    -------
    str
        An existing path.

    Examples
    --------
    >>> resolve_model("no/such/dir")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no/such/dir: no such file or directory, and not a packaged checkpoint name
    """
    path = resolve_model_name(spec)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or directory, and not a packaged checkpoint name")
    return path


def resolve_packaged_name(model: str | os.PathLike[str]) -> str:
    """Deprecated name of :func:`resolve_model_name` (it resolves cached Hugging Face ids too); warns.

    .. deprecated:: 0.1.0
        Use :func:`resolve_model_name` (same argument, same result).

    Parameters
    ----------
    model : str or path
        A path, a packaged checkpoint name, or a cached model id.

    Returns
    -------
    str
        :func:`resolve_model_name`'s result.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     resolve_packaged_name("no/such/dir"), w[0].category.__name__
    ('no/such/dir', 'DeprecationWarning')
    """
    warnings.warn("resolve_packaged_name is deprecated: use resolve_model_name (same argument and result; it also "
                  "resolves cached Hugging Face ids)", DeprecationWarning, stacklevel=2)
    return resolve_model_name(model)
