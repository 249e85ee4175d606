"""Model ids resolved offline from the local Hugging Face cache (``huggingface_hub``'s cache API).

``certbound`` never downloads: an id resolves only when its snapshot is
already in the local cache (``snapshot_download(..., local_files_only=True)``),
which is what ``transformers``' ``from_pretrained`` or ``huggingface-cli
download`` leave behind. The cache folder is read from the environment at call
time — ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub`` (the
order ``huggingface_hub`` documents) — because ``huggingface_hub`` fixes its
own constants when it is first imported, and a notebook or test may set the
variables later. ``HF_HUB_OFFLINE`` needs no handling: no network is used
whatever its value.

Needs the optional ``hub`` extra (``pip install 'certbound[hub]'``).
"""

from __future__ import annotations

import os

__all__ = ["hub_cache_dir", "looks_like_hub_id", "resolve_hub_id"]


def hub_cache_dir() -> str:
    """The Hugging Face hub cache folder the environment selects now.

    Returns
    -------
    str
        ``HF_HUB_CACHE`` (or its older name ``HUGGINGFACE_HUB_CACHE``), else ``$HF_HOME/hub``, else
        ``$XDG_CACHE_HOME/huggingface/hub`` or ``~/.cache/huggingface/hub``.

    Examples
    --------
    >>> import os
    >>> os.environ["HF_HUB_CACHE"] = "/tmp/hf-cache"; hub_cache_dir()
    '/tmp/hf-cache'
    >>> del os.environ["HF_HUB_CACHE"]
    """
    env = os.environ
    for key in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):  # the second: its older name
        if env.get(key):
            return os.path.expanduser(env[key])
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"),
                                              "huggingface")
    return os.path.expanduser(os.path.join(home, "hub"))


def looks_like_hub_id(text: str) -> bool:
    """Whether ``text`` has the form of a model id (``name`` or ``org/name``; no path syntax).

    Parameters
    ----------
    text : str
        A model argument.

    Returns
    -------
    bool
        True for ``name`` or ``org/name`` made of letters, digits, ``-``, ``_`` and ``.``
        (no leading ``-``/``.``, no ``..``).

    Examples
    --------
    >>> looks_like_hub_id("org/model-1"), looks_like_hub_id("./model"), looks_like_hub_id("a/b/c")
    (True, False, False)
    """
    if not text or text.startswith((".", "/", "~")) or text.count("/") > 1 or os.sep != "/" and os.sep in text:
        return False
    parts = text.split("/")
    ok = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    return all(p and set(p) <= ok and not p.startswith(("-", ".")) and ".." not in p for p in parts)


def _repo_folder(repo_id: str) -> str:
    try:
        from huggingface_hub.file_download import repo_folder_name

        return repo_folder_name(repo_id=repo_id, repo_type="model")
    except ImportError:  # pragma: no cover - older huggingface_hub layouts
        return "models--" + repo_id.replace("/", "--")


def resolve_hub_id(repo_id: str, *, revision: str | None = None) -> str:
    """The local snapshot folder of a cached model id (never a download).

    Parameters
    ----------
    repo_id : str
        A Hugging Face model id, ``"org/name"``.
    revision : str, optional
        A cached revision (branch, tag or commit); default the cached main one.

    Returns
    -------
    str
        The snapshot folder in the local cache (:func:`hub_cache_dir`).

    Raises
    ------
    FileNotFoundError
        Naming the folders searched when the id is not in the cache, or with the
        install command when ``huggingface_hub`` (the ``hub`` extra) is missing.
    """
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        raise FileNotFoundError(f"{repo_id}: no such file or directory, and not a packaged checkpoint name; to "
                                "resolve it as a Hugging Face model id from the local cache, install "
                                "huggingface_hub: pip install 'certbound[hub]'") from None
    cache = hub_cache_dir()
    try:
        return str(snapshot_download(repo_id, revision=revision, cache_dir=cache, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        where = os.path.join(cache, _repo_folder(repo_id))
        rev = f" at revision {revision!r}" if revision else ""
        raise FileNotFoundError(
            f"{repo_id}: no such file or directory, not a packaged checkpoint name, and not in the local "
            f"Hugging Face cache{rev} (searched {where}; cache folder from HF_HUB_CACHE, else HF_HOME/hub, "
            "else ~/.cache/huggingface/hub). certbound never downloads: fetch it first, e.g. "
            f"`huggingface-cli download {repo_id}`, or pass a local directory") from None
