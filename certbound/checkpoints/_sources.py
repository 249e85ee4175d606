"""Checkpoint files on disk → named float64 tensors, one at a time.

:func:`load_checkpoint` accepts a Hugging Face model directory (``config.json``
plus ``model.safetensors``, a sharded ``model.safetensors.index.json``,
``pytorch_model.bin`` or its sharded index, or an ``.onnx`` export) or a single
weights file, and returns a :class:`Checkpoint`: it lists tensor names,
shapes and storage dtypes from metadata alone and converts a tensor to float64
only when asked (:meth:`Checkpoint.get`).

What is certified is the matrix *stored in the file*: float16, bfloat16 and
float32 convert to float64 exactly, so no rounding happens here.

Formats
-------
safetensors
    Read by our own memory-mapped reader (:mod:`._safetensors`), no torch.
PyTorch ``.bin``/``.pt``
    Needs the optional ``torch`` extra; loaded with ``weights_only=True``
    (no arbitrary code from pickles) and memory-mapped when the file allows.
ONNX
    Needs the optional ``onnx`` extra. Exporters store ``nn.Linear`` weights
    as unnamed ``onnx::MatMul_*`` initialisers in (in, out) layout; the name
    is recovered from the bias initialiser added to the MatMul's output
    (``…query.bias`` → ``…query.weight``) and the array is transposed back to
    the PyTorch (out, in) layout, so the architecture adapters see the same
    names and layouts as for safetensors. The whole ONNX model is parsed
    into memory (protobuf); BERT-family exports are small.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

from certbound._errors import OptionError

from ._safetensors import FLOAT_DTYPES, SafetensorsFile

__all__ = ["Checkpoint", "load_checkpoint", "read_config", "iter_tensors"]

_SAFETENSORS_INDEX = "model.safetensors.index.json"
_BIN_INDEX = "pytorch_model.bin.index.json"


def read_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a ``config.json`` (or mapping) file as a dict, with clear errors.

    Parameters
    ----------
    path : str or path
        A JSON file holding an object.

    Returns
    -------
    dict
        Its contents.

    Raises
    ------
    ValueError
        For a file that is not valid JSON or not an object (naming the file).
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return cfg


@dataclass
class _Entry:
    """Where a tensor lives and how to get it (backend-specific loader; ``load_index``: one first-axis slice)."""

    file: str
    shape: tuple[int, ...]
    dtype: str
    load: Callable[[], np.ndarray] = field(repr=False)
    load_index: Callable[[int], np.ndarray] | None = field(default=None, repr=False)


def _split_index(name: str) -> tuple[str, int] | None:
    """``("base", i)`` for a slice name ``"base[i]"``, else None.

    >>> _split_index("layers.0.mlp.experts.down_proj[3]"), _split_index("w")
    (('layers.0.mlp.experts.down_proj', 3), None)
    """
    if name.endswith("]") and "[" in name:
        base, _, idx = name[:-1].rpartition("[")
        if idx.isdigit():
            return base, int(idx)
    return None


class Checkpoint:
    """Named tensors of one checkpoint, converted to float64 on request.

    Attributes
    ----------
    path : str
        What the user pointed at (directory or file).
    format : str
        ``"safetensors"``, ``"safetensors-sharded"``, ``"torch"``,
        ``"torch-sharded"`` or ``"onnx"``.
    config : dict or None
        The parsed ``config.json`` (or the one given explicitly; for ONNX
        without a config, one inferred from the graph).
    config_path : str or None
        Where the config came from (``None`` if inferred or absent).
    """

    def __init__(self, path: str, fmt: str, entries: dict[str, _Entry], config: dict[str, Any] | None,
                 config_path: str | None, closers: list[Callable[[], None]] | None = None):
        self.path = path
        self.format = fmt
        self._entries = entries
        self.config = config
        self.config_path = config_path
        self._closers = closers or []

    def names(self) -> list[str]:
        """All tensor names.

        Returns
        -------
        list of str
            The names (slices of stacked tensors are not listed separately).
        """
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        if name in self._entries:
            return True
        split = _split_index(name) if isinstance(name, str) else None
        return split is not None and split[0] in self._entries and 0 <= split[1] < self._entries[split[0]].shape[0]

    def _entry(self, name: str) -> _Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise ValueError(f"{self.path}: tensor {name!r} is missing from the checkpoint") from None

    def _resolve(self, name: str) -> tuple[_Entry, int | None]:
        """The entry of ``name``, or of ``base`` with the index for ``base[i]`` (slice i of a stacked tensor)."""
        if name not in self._entries:
            split = _split_index(name)
            if split is not None and split[0] in self._entries:
                e = self._entries[split[0]]
                if not (len(e.shape) >= 2 and 0 <= split[1] < e.shape[0]):
                    raise ValueError(f"{e.file}: tensor {split[0]!r} of shape {list(e.shape)} has no slice {split[1]}")
                return e, split[1]
        return self._entry(name), None

    def shape(self, name: str) -> tuple[int, ...]:
        """Shape from metadata (no data read); ``base[i]``: the shape of slice i.

        Parameters
        ----------
        name : str
            A tensor name, or ``base[i]``.

        Returns
        -------
        tuple of int
            The stored shape.
        """
        e, i = self._resolve(name)
        return e.shape if i is None else e.shape[1:]

    def dtype(self, name: str) -> str:
        """Storage dtype as a safetensors-style string (``"F32"``, ``"BF16"``…).

        Parameters
        ----------
        name : str
            A tensor name, or ``base[i]``.

        Returns
        -------
        str
            The dtype string.
        """
        return self._resolve(name)[0].dtype

    def file_of(self, name: str) -> str:
        """The file holding the tensor (for error messages).

        Parameters
        ----------
        name : str
            A tensor name, or ``base[i]``.

        Returns
        -------
        str
            The file's path.
        """
        return self._resolve(name)[0].file

    def get(self, name: str, *, require_finite: bool = True) -> np.ndarray:
        """The tensor as a new float64 array (exact conversion).

        ``base[i]`` names slice i (along the first axis) of a stacked tensor,
        e.g. one expert of transformers 5's ``experts.gate_up_proj`` (E, 2F, N);
        only that slice is read where the format allows (safetensors).
        Raises ``ValueError`` naming the file and tensor if it is missing, has a
        non-float dtype, or (``require_finite``) holds NaN or ±Inf.

        Parameters
        ----------
        name : str
            A tensor name, or ``base[i]``.
        require_finite : bool
            Refuse NaN and ±Inf entries.

        Returns
        -------
        numpy.ndarray
            A new float64 array, equal to the stored values.
        """
        e, index = self._resolve(name)
        if e.dtype not in FLOAT_DTYPES:
            raise ValueError(f"{e.file}: tensor {name!r} has unsupported dtype {e.dtype} "
                             f"(supported: {', '.join(FLOAT_DTYPES)})")
        if index is None:
            a = e.load()
            want = e.shape
        else:
            a = e.load_index(index) if e.load_index is not None else np.array(e.load()[index])
            want = e.shape[1:]
        if tuple(a.shape) != want:  # defensive: metadata and data disagree
            raise ValueError(f"{e.file}: tensor {name!r} has shape {list(a.shape)}, metadata says {list(want)}")
        if require_finite:
            bad = int(a.size - np.count_nonzero(np.isfinite(a)))
            if bad:
                raise ValueError(f"{e.file}: tensor {name!r} contains {bad} non-finite value(s) (NaN or Inf); "
                                 f"no certified spectrum exists for it")
        return a

    def close(self) -> None:
        """Release memory maps and file handles."""
        for c in self._closers:
            c()
        self._closers = []

    def __enter__(self) -> "Checkpoint":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Checkpoint({self.path!r}, format={self.format!r}, tensors={len(self._entries)})"


# --------------------------------------------------------------------------------------
# safetensors (single file and sharded)


def _safetensors_entries(files: list[str], closers: list[Callable[[], None]]) -> dict[str, _Entry]:
    entries: dict[str, _Entry] = {}
    for fp in files:
        st = SafetensorsFile(fp)
        closers.append(st.close)
        for name in st.keys():
            if name in entries:
                raise ValueError(f"{fp}: tensor {name!r} also appears in {entries[name].file}")
            info = st.info(name)
            entries[name] = _Entry(fp, info.shape, info.dtype, lambda st=st, n=name: st.get_float64(n),
                                   lambda i, st=st, n=name: st.get_float64(n, index=i))
    return entries


def _read_index(index_path: str) -> dict[str, str]:
    idx = read_config(index_path)
    wm = idx.get("weight_map")
    if not isinstance(wm, dict) or not all(isinstance(v, str) for v in wm.values()):
        raise ValueError(f"{index_path}: no valid 'weight_map' (tensor name → shard file)")
    return wm


def _sharded_safetensors(index_path: str, closers: list[Callable[[], None]]) -> dict[str, _Entry]:
    wm = _read_index(index_path)
    base = os.path.dirname(index_path)
    shards = sorted(set(wm.values()))
    missing = [s for s in shards if not os.path.isfile(os.path.join(base, s))]
    if missing:
        raise FileNotFoundError(f"{index_path}: shard file(s) missing: {', '.join(missing)}")
    entries = _safetensors_entries([os.path.join(base, s) for s in shards], closers)
    for name, shard in wm.items():
        if name not in entries:
            raise ValueError(f"{os.path.join(base, shard)}: tensor {name!r} listed in {index_path} is missing")
    return entries


# --------------------------------------------------------------------------------------
# PyTorch .bin (optional torch)

_TORCH_DTYPES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
                 "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL"}


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ValueError("reading PyTorch .bin checkpoints needs torch: pip install 'certbound[torch]' "
                         "(or convert the checkpoint to safetensors)") from None
    return torch


def _torch_entries(files: list[str]) -> dict[str, _Entry]:
    torch = _import_torch()
    entries: dict[str, _Entry] = {}
    for fp in files:
        if not os.path.isfile(fp):
            raise FileNotFoundError(f"{fp}: no such file")
        try:
            try:
                sd = torch.load(fp, map_location="cpu", weights_only=True, mmap=True)
            except (RuntimeError, ValueError) as exc:
                if "mmap" not in str(exc).lower():
                    raise
                sd = torch.load(fp, map_location="cpu", weights_only=True)  # legacy format: no mmap
        except Exception as exc:  # torch raises many types for corrupt/unsafe pickles
            raise ValueError(f"{fp}: cannot load as a PyTorch state dict with weights_only=True ({exc})") from None
        if isinstance(sd, dict) and "state_dict" in sd and isinstance(sd["state_dict"], dict):
            sd = sd["state_dict"]
        if not isinstance(sd, dict):
            raise ValueError(f"{fp}: expected a dict of tensors, got {type(sd).__name__}")
        for name, t in sd.items():
            if not isinstance(t, torch.Tensor):
                continue
            dt = _TORCH_DTYPES.get(str(t.dtype).replace("torch.", ""), str(t.dtype))

            def load(t: Any = t) -> np.ndarray:
                # bf16/f16/f32 → f64 is exact in torch as in numpy.
                return t.detach().to(torch.float64).contiguous().numpy().copy()

            def load_index(i: int, t: Any = t) -> np.ndarray:
                return t[i].detach().to(torch.float64).contiguous().numpy().copy()

            entries[name] = _Entry(fp, tuple(int(s) for s in t.shape), dt, load, load_index)
    return entries


# --------------------------------------------------------------------------------------
# ONNX (optional onnx)

_ONNX_DTYPES = {1: "F32", 10: "F16", 16: "BF16", 11: "F64", 7: "I64", 6: "I32", 9: "BOOL", 3: "I8", 2: "U8"}


def _import_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise ValueError("reading ONNX exports needs onnx: pip install 'certbound[onnx]'") from None
    return onnx


def _onnx_linear_names(graph: Any, inits: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """Map recovered ``….weight`` names to (initialiser, transpose?) for MatMul/Gemm + bias.

    ``nn.Linear`` exports as ``MatMul(x, onnx::MatMul_k)`` with a transposed
    (in, out) copy of the weight, or ``Gemm(x, W, b, transB=1)`` with the
    (out, in) weight itself; both become (out, in). GPT-2's ``Conv1D``
    (``addmm(b, x, W)``) exports as ``Gemm(x, W, b)`` with W under its own
    parameter name, already in its stored (in, out) layout: an initialiser
    that carries the parameter's own name is kept as stored, never transposed.
    Biases may be initialisers, ``Constant`` nodes or ``Identity`` aliases of
    either (the exporter deduplicates equal initialisers).
    """
    consumers: dict[str, list[Any]] = {}
    constants = {n.output[0] for n in graph.node if n.op_type == "Constant" and n.output}
    # the exporter deduplicates equal initialisers (e.g. all-zero biases) into Identity aliases
    constants |= {n.output[0] for n in graph.node if n.op_type == "Identity" and n.output
                  and (n.input[0] in inits or n.input[0] in constants)}
    for node in graph.node:
        for inp in node.input:
            consumers.setdefault(inp, []).append(node)

    def is_bias(name: str) -> bool:
        return name.endswith("bias") and (name in inits or name in constants)

    out: dict[str, tuple[str, bool]] = {}
    for node in graph.node:
        if node.op_type == "MatMul" and len(node.input) == 2 and node.input[1] in inits:
            w = node.input[1]
            for c in consumers.get(node.output[0], []):
                if c.op_type != "Add":
                    continue
                other = [i for i in c.input if i != node.output[0]]
                if len(other) == 1 and is_bias(other[0]):
                    name = other[0][: -len("bias")] + "weight"
                    out.setdefault(name, (w, w != name))  # exporter's (in,out) copy → (out,in)
        elif node.op_type == "Gemm" and len(node.input) == 3 and node.input[1] in inits:
            bias = node.input[2]
            if is_bias(bias):
                name = bias[: -len("bias")] + "weight"
                trans_b = any(a.name == "transB" and a.i == 1 for a in node.attribute)
                out.setdefault(name, (node.input[1], not trans_b and node.input[1] != name))
    return out


def _onnx_infer_heads(graph: Any, inits: dict[str, Any], query_bias: str, hidden: int) -> int | None:
    """Head count from the Reshape of the query projection to (…, heads, d_h)."""
    from onnx import numpy_helper

    producer = {o: n for n in graph.node for o in n.output}
    consts: dict[str, np.ndarray] = {}
    for n in graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].HasField("t"):
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    adds = [n for n in graph.node if n.op_type == "Add" and query_bias in n.input]
    for add in adds:
        for reshape in (n for n in graph.node if n.op_type == "Reshape" and n.input[0] == add.output[0]):
            shape_src = reshape.input[1]
            vals: list[int] = []
            if shape_src in inits:
                vals = [int(v) for v in numpy_helper.to_array(inits[shape_src]).ravel()]
            elif shape_src in consts:
                vals = [int(v) for v in consts[shape_src].ravel()]
            elif shape_src in producer and producer[shape_src].op_type == "Concat":
                for i in producer[shape_src].input:
                    arr = consts.get(i)
                    if arr is None and i in inits:
                        arr = numpy_helper.to_array(inits[i])
                    vals.append(int(arr.ravel()[0]) if arr is not None and arr.size == 1 else -1)
            if len(vals) >= 2 and vals[-2] > 0 and vals[-1] > 0 and vals[-2] * vals[-1] == hidden:
                return vals[-2]
            # transformers 5: view(*input_shape, -1, head_dim), the head count left to Reshape
            if len(vals) >= 2 and vals[-2] == -1 and 0 < vals[-1] < hidden and hidden % vals[-1] == 0:
                return hidden // vals[-1]
    return None


def _onnx_infer_config(path: str, graph: Any, inits: dict[str, Any], names: list[str],
                       shapes: dict[str, tuple[int, ...]]) -> dict[str, Any] | None:
    """A BERT-style config recovered from an ONNX graph of a BERT-family encoder."""
    import re

    pat = re.compile(r"^(.*?)encoder\.layer\.(\d+)\.attention\.self\.query\.weight$")
    layers, prefix = set(), None
    for n in names:
        m = pat.match(n)
        if m:
            layers.add(int(m.group(2)))
            prefix = m.group(1)
    if not layers or prefix is None:
        return None
    q = f"{prefix}encoder.layer.0.attention.self.query.weight"
    hidden = shapes[q][0]
    inter = f"{prefix}encoder.layer.0.intermediate.dense.weight"
    heads = _onnx_infer_heads(graph, inits, f"{prefix}encoder.layer.0.attention.self.query.bias", hidden)
    if heads is None:
        raise OptionError(f"{path}: cannot infer the number of attention heads from the ONNX graph; "
                          "give a `config` file (a config.json with num_attention_heads)")
    return {
        "model_type": "bert",
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_hidden_layers": max(layers) + 1,
        "intermediate_size": shapes[inter][0] if inter in shapes else 4 * hidden,
        "_inferred": "from the ONNX graph (tensor names, shapes, and the query Reshape to (heads, head_dim))",
    }


def _onnx_checkpoint(path: str, config: dict[str, Any] | None, config_path: str | None) -> Checkpoint:
    onnx = _import_onnx()
    from onnx import numpy_helper

    try:
        model = onnx.load(path)
    except Exception as exc:  # protobuf DecodeError etc.
        raise ValueError(f"{path}: cannot parse as ONNX ({exc})") from None
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    entries: dict[str, _Entry] = {}

    def make_entry(init: Any, transpose: bool) -> _Entry:
        dims = tuple(int(d) for d in init.dims)
        shape = dims[::-1] if transpose else dims
        dt = _ONNX_DTYPES.get(int(init.data_type), f"onnx:{init.data_type}")

        def load() -> np.ndarray:
            a = numpy_helper.to_array(init).astype(np.float64)  # exact for f16/bf16/f32
            return np.ascontiguousarray(a.T) if transpose else a

        return _Entry(path, shape, dt, load)

    renamed = _onnx_linear_names(graph, inits)
    used = {w for w, _ in renamed.values()}
    for name, init in inits.items():
        if name not in used:
            entries[name] = make_entry(init, False)
    for name, (w, transpose) in renamed.items():
        if name not in entries:
            entries[name] = make_entry(inits[w], transpose)
    if config is None:
        config = _onnx_infer_config(path, graph, inits, list(entries), {k: e.shape for k, e in entries.items()})
    return Checkpoint(path, "onnx", entries, config, config_path)


# --------------------------------------------------------------------------------------
# dispatch


def _variant_weights(directory: str) -> list[tuple[str, str]]:
    """``save_pretrained(variant=V)`` files: ``model.V.safetensors``, ``model.safetensors.index.V.json``, …."""
    import re

    pats = [("safetensors", re.compile(r"^model\.([\w-]+)\.safetensors$")),
            ("safetensors-sharded", re.compile(r"^model\.safetensors\.index\.([\w-]+)\.json$")),
            ("torch", re.compile(r"^pytorch_model\.([\w-]+)\.bin$")),
            ("torch-sharded", re.compile(r"^pytorch_model\.bin\.index\.([\w-]+)\.json$"))]
    found = []
    for f in sorted(os.listdir(directory)):
        for fmt, pat in pats:
            m = pat.match(f)
            # shards of a sharded variant (model.fp16-00001-of-00002.safetensors) are not candidates
            if m and not re.search(r"-\d{5}-of-\d{5}$", m.group(1)):
                found.append((fmt, os.path.join(directory, f)))
    return found


def _find_weights(directory: str) -> tuple[str, str]:
    """(format, file) of the weights in a model directory.

    The plain file names first; otherwise a single ``variant`` (e.g.
    ``model.fp16.safetensors`` from ``save_pretrained(variant="fp16")``);
    several variants are ambiguous and refused with their names.
    """
    candidates = [
        ("safetensors", "model.safetensors"),
        ("safetensors-sharded", _SAFETENSORS_INDEX),
        ("torch", "pytorch_model.bin"),
        ("torch-sharded", _BIN_INDEX),
        ("onnx", "model.onnx"),
        ("onnx", os.path.join("onnx", "model.onnx")),
    ]
    for fmt, rel in candidates:
        p = os.path.join(directory, rel)
        if os.path.isfile(p):
            return fmt, p
    variants = _variant_weights(directory)
    if len(variants) == 1:
        return variants[0]
    if len(variants) > 1:
        raise ValueError(f"{directory}: several weight variants ({', '.join(os.path.basename(p) for _, p in variants)})"
                         "; give the one to certify as the model path")
    onnx_files = sorted(f for f in os.listdir(directory) if f.endswith(".onnx"))
    if len(onnx_files) == 1:
        return "onnx", os.path.join(directory, onnx_files[0])
    looked = (", ".join(rel for _, rel in candidates)
              + ", a variant such as model.fp16.safetensors, or a single *.onnx")
    raise FileNotFoundError(f"{directory}: no weights found (looked for {looked})")


def _format_of_file(path: str) -> str:
    base = os.path.basename(path)
    if base.endswith(".safetensors"):
        return "safetensors"
    import re

    if base.endswith(".safetensors.index.json") or re.search(r"\.safetensors\.index\.[\w-]+\.json$", base):
        return "safetensors-sharded"
    if base.endswith(".bin.index.json") or re.search(r"\.bin\.index\.[\w-]+\.json$", base):
        return "torch-sharded"
    if base.endswith((".bin", ".pt", ".pth")):
        return "torch"
    if base.endswith(".onnx"):
        return "onnx"
    raise ValueError(f"{path}: unknown weights format (expected .safetensors, .bin/.pt/.pth, .onnx, "
                     f"or a *.index.json of shards)")


def load_checkpoint(path: str | os.PathLike[str], *, config: str | os.PathLike[str] | dict[str, Any] | None = None
                    ) -> Checkpoint:
    """Open a checkpoint lazily (no tensor data is read yet).

    Parameters
    ----------
    path : str or PathLike
        A model directory or a weights file.
    config : path or dict, optional
        The model config; by default ``config.json`` next to the weights
        (for ONNX without one, a config is inferred from the graph).

    Returns
    -------
    Checkpoint

    Raises
    ------
    FileNotFoundError
        No such file/directory, or no weights in the directory.
    ValueError
        Corrupt or truncated file, unknown format, or a missing optional
        package (torch/onnx); the message names the file.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from safetensors.numpy import save_file
    >>> d = tempfile.mkdtemp()
    >>> save_file({"w": np.eye(2, dtype=np.float32)}, os.path.join(d, "model.safetensors"))
    >>> ck = load_checkpoint(d)
    >>> ck.names(), ck.shape("w"), ck.dtype("w"), ck.config is None
    (['w'], (2, 2), 'F32', True)
    >>> ck.get("w").dtype
    dtype('float64')
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        # A bare name or "org/name" is more likely a packaged name or hub id than a path: say where those go.
        hint = ("; packaged names and Hugging Face ids are resolved by certbound.open_model and the CLI "
                "(this loader reads paths only)"
                if not os.path.isabs(path) and path.count("/") <= 1 and not os.path.splitext(path)[1] else "")
        raise FileNotFoundError(f"{path}: no such file or directory{hint}")
    if os.path.isdir(path):
        fmt, weights = _find_weights(path)
        directory = path
    else:
        fmt, weights = _format_of_file(path), path
        directory = os.path.dirname(os.path.abspath(path))
    cfg: dict[str, Any] | None
    cfg_path: str | None
    if isinstance(config, dict):
        cfg, cfg_path = dict(config), None
    elif config is not None:
        cfg_path = os.fspath(config)
        cfg = read_config(cfg_path)
    else:
        cand = os.path.join(directory, "config.json")
        cfg_path = cand if os.path.isfile(cand) else None
        cfg = read_config(cand) if cfg_path else None
    closers: list[Callable[[], None]] = []
    if fmt == "safetensors":
        entries = _safetensors_entries([weights], closers)
    elif fmt == "safetensors-sharded":
        entries = _sharded_safetensors(weights, closers)
    elif fmt == "torch":
        entries = _torch_entries([weights])
    elif fmt == "torch-sharded":
        wm = _read_index(weights)
        base = os.path.dirname(weights)
        entries = _torch_entries([os.path.join(base, s) for s in sorted(set(wm.values()))])
        for name, shard in wm.items():
            if name not in entries:
                raise ValueError(f"{os.path.join(base, shard)}: tensor {name!r} listed in {weights} is missing")
    else:
        return _onnx_checkpoint(weights, cfg, cfg_path)
    return Checkpoint(path, fmt, entries, cfg, cfg_path, closers)


def iter_tensors(checkpoint: Checkpoint) -> Iterator[tuple[str, np.ndarray]]:
    """Yield ``(name, float64 array)`` for every float tensor, one at a time.

    Parameters
    ----------
    checkpoint : Checkpoint
        The opened checkpoint.

    Yields
    ------
    tuple of (str, numpy.ndarray)
        Name and exact float64 values of each floating-point tensor.
    """
    for name in checkpoint.names():
        if checkpoint.dtype(name) in FLOAT_DTYPES:
            yield name, checkpoint.get(name, require_finite=False)
