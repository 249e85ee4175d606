"""What a model argument names: an existing path, or a packaged checkpoint's name."""

from __future__ import annotations

import os

from certbound.checkpoints import PACKAGED_CHECKPOINTS, find_packaged_checkpoint

__all__ = ["resolve_packaged_name", "resolve_model"]


def resolve_packaged_name(model: str | os.PathLike[str]) -> str:
    """``model`` itself, unless it is no existing path and names a packaged checkpoint: then that checkpoint's path.

    A name that is neither is returned unchanged (the loader then reports the
    missing file). Raises ``FileNotFoundError`` when a packaged checkpoint's
    data package is not installed.

    Parameters
    ----------
    model : str or path
        A path, or a packaged checkpoint name.

    Returns
    -------
    str
        The path to open.

    Examples
    --------
    >>> resolve_packaged_name("no/such/dir")
    'no/such/dir'
    """
    model = os.fspath(model)
    if not os.path.exists(model) and model.split("/")[-1] in PACKAGED_CHECKPOINTS:
        try:
            return str(find_packaged_checkpoint(model))
        except LookupError as exc:
            raise FileNotFoundError(str(exc)) from None
    return model


def resolve_model(spec: str | os.PathLike[str]) -> str:
    """A checkpoint path: an existing path, or a packaged checkpoint's name.

    Raises ``FileNotFoundError`` naming both possibilities when neither works.

    Parameters
    ----------
    spec : str or path
        A path, or a packaged checkpoint name.

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
    spec = os.fspath(spec)
    if os.path.exists(spec):
        return spec
    try:
        return str(find_packaged_checkpoint(spec))
    except KeyError:
        raise FileNotFoundError(f"{spec}: no such file or directory, and not a packaged checkpoint name") from None
    except LookupError as exc:
        raise FileNotFoundError(f"{spec}: {exc}") from None
