"""Training the Π-Transformer with torch (optional extra ``certbound[torch]``).

torch is imported inside the functions, so this module imports without it.
The torch forward pass is a literal transcription of
:meth:`certbound.models.network.PiTransformer.forward` on float64 tensors
(tests check they agree); like the numpy one it computes only row 0 ([CLS])
in the last block, the only row the readout sees.

Training is minibatch Adam over a *stream*: batch b of every epoch is the
examples b·B … (b+1)·B − 1 of the task's stream 1, regenerated from the seed
when needed (:meth:`SparseMajorityTask.sample` with ``start``), so memory does
not grow with n and n = 10⁶ trains in minutes. The learning rate follows a
fixed schedule (linear warm-up, then cosine decay to ``final_lr_fraction`` of
the peak). Everything is deterministic given the settings: weights start from
the version-stable raw PCG64 stream (:meth:`PiTransformer.random`), the batch
order is fixed, ``torch.use_deterministic_algorithms(True)`` is set and the
thread count is fixed.

After every optimiser step the readout is projected onto ‖w‖₂ ≤ C_w (the
constraint the loss range and the bound rely on); all other matrices are free
(the post hoc bound certifies whatever norms they end with).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterator

import numpy as np

from certbound.models.config import PiTransformerConfig
from certbound.models.network import PiTransformer
from certbound.models.task import SparseMajorityTask

__all__ = ["TrainSettings", "TrainResult", "torch_forward", "torch_loss", "learning_rate_at",
           "train_pi_transformer", "train_demo_model"]


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("training needs torch: pip install 'certbound[torch]'") from exc
    return torch


def _project_rows_torch(Z):
    torch = _torch()
    # max(1, ‖z‖) written as sqrt(max(1, ‖z‖²)): same value, and no NaN gradient at z = 0.
    sumsq = (Z * Z).sum(dim=-1, keepdim=True)
    return Z / torch.sqrt(torch.clamp(sumsq, min=1.0))


def torch_forward(params: dict, config: PiTransformerConfig, X):
    """f(X) for a batch X (B, T, N) of float64 tensors; same operations as the numpy forward.

    The last block computes row 0 only (the readout reads nothing else), as
    :meth:`certbound.models.network.PiTransformer.forward` does.
    """
    torch = _torch()
    dh = config.d_head
    X = _project_rows_torch(X)
    for layer in range(config.n_layers):
        p = f"blocks.{layer}"
        last = layer == config.n_layers - 1
        Xq = X[:, :1, :] if last else X
        att = torch.zeros_like(Xq)
        for head in range(config.n_heads):
            s = slice(head * dh, (head + 1) * dh)
            q = Xq @ params[f"{p}.attn.W_Q"][:, s]
            k = X @ params[f"{p}.attn.W_K"][:, s]
            v = (X @ params[f"{p}.attn.W_V"][:, s]) @ params[f"{p}.attn.W_O"][s, :]
            att = att + torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
        Y = _project_rows_torch(Xq + att if config.residual else att)
        if config.ffn_kind == "single":
            ff = torch.relu(Y) @ params[f"{p}.ffn.M"]
        else:
            ff = torch.relu(Y @ params[f"{p}.ffn.M_in"]) @ params[f"{p}.ffn.M_out"]
        X = _project_rows_torch(Y + ff if config.residual else ff)
    return X[:, 0, :] @ params["readout.w"]


def torch_loss(outputs, y, config: PiTransformerConfig):
    """Mean loss of ``config.loss`` (same formula as :func:`certbound.models.network.loss_values`)."""
    torch = _torch()
    spec = config.loss
    margin = y * outputs
    if spec.kind == "clipped-logistic":
        c = spec.clip
        m = torch.clamp(margin, -c, c)
        return (torch.nn.functional.softplus(-m) - float(np.logaddexp(0.0, -c))).mean()
    return torch.clamp(1.0 - margin / spec.margin, 0.0, 1.0).mean()


@dataclass(frozen=True)
class TrainSettings:
    """Optimisation settings (all recorded in the checkpoint's config.json).

    ``epochs`` passes over the n training examples in minibatches of
    ``batch_size`` (the last batch of an epoch may be smaller); the learning
    rate is :func:`learning_rate_at` of the step.
    """

    seed: int = 0
    epochs: int = 3
    batch_size: int = 512
    learning_rate: float = 0.01
    warmup_steps: int = 100
    final_lr_fraction: float = 0.01
    weight_decay: float = 0.0
    init_scale: float = 1.0
    threads: int = 1
    log_every: int = 200

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "threads", "log_every"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"training {name} must be a positive integer, got {v!r}")
        if not (isinstance(self.warmup_steps, int) and self.warmup_steps >= 0):
            raise ValueError(f"training warmup_steps must be an integer ≥ 0, got {self.warmup_steps!r}")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"training learning_rate must be positive, got {self.learning_rate!r}")
        if not 0 <= self.final_lr_fraction <= 1:
            raise ValueError(f"training final_lr_fraction must lie in [0, 1], got {self.final_lr_fraction!r}")
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"training weight_decay must be ≥ 0, got {self.weight_decay!r}")


def learning_rate_at(step: int, total_steps: int, settings: TrainSettings) -> float:
    """The scheduled learning rate at ``step`` (0-based): linear warm-up, then cosine decay.

    >>> s = TrainSettings(learning_rate=0.1, warmup_steps=10, final_lr_fraction=0.0)
    >>> learning_rate_at(0, 110, s), learning_rate_at(9, 110, s), round(learning_rate_at(60, 110, s), 12)
    (0.01, 0.1, 0.05)
    """
    peak = settings.learning_rate
    w = min(settings.warmup_steps, max(total_steps - 1, 0))
    if step < w:
        return peak * (step + 1) / w
    span = max(total_steps - w, 1)
    t = min(max(step - w, 0) / span, 1.0)
    low = peak * settings.final_lr_fraction
    return low + (peak - low) * 0.5 * (1.0 + math.cos(math.pi * t))


@dataclass
class TrainResult:
    """A trained model and its training record."""

    model: PiTransformer
    history: list[dict[str, float]]
    seconds: float
    settings: TrainSettings
    steps: int = 0

    def record(self) -> dict[str, Any]:
        return {"settings": asdict(self.settings), "seconds": round(self.seconds, 3), "steps": self.steps,
                "final": self.history[-1] if self.history else {}}


def _project_readout_(w, bound: float) -> None:
    torch = _torch()
    with torch.no_grad():
        norm = torch.linalg.vector_norm(w)
        if float(norm) > bound:
            # Scale into the ball with a relative margin of 2^-40, far above the
            # rounding of any norm evaluation (torch's or numpy's), so ‖w‖ ≤ C_w holds
            # for the stored float64 vector whichever routine checks it.
            w.mul_(bound * (1.0 - 2.0**-40) / float(norm))
            while float(torch.linalg.vector_norm(w)) > bound * (1.0 - 2.0**-41):
                w.mul_(1.0 - 2.0**-40)


BatchSource = Callable[[], Iterator[tuple[int, np.ndarray, np.ndarray]]]


def _train(config: PiTransformerConfig, n_train: int, epoch_batches: BatchSource, settings: TrainSettings,
           log: Callable[[str], None] | None) -> TrainResult:
    """Minibatch Adam over ``epochs`` passes of ``epoch_batches()`` (yields (start, X, y))."""
    torch = _torch()
    if n_train < 1:
        raise ValueError(f"n_train must be ≥ 1, got {n_train}")
    torch.manual_seed(settings.seed)
    torch.use_deterministic_algorithms(True)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, int(settings.threads)))
    try:
        start = time.perf_counter()
        init = PiTransformer.random(config, seed=settings.seed, scale=settings.init_scale)
        params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in sorted(init.params.items())}
        opt = torch.optim.Adam(list(params.values()), lr=settings.learning_rate,
                               weight_decay=settings.weight_decay)
        per_epoch = -(-n_train // settings.batch_size)
        total = settings.epochs * per_epoch
        history: list[dict[str, float]] = []
        step = 0
        run_loss, run_err, run_count = 0.0, 0, 0
        for epoch in range(settings.epochs):
            for _, Xb, yb in epoch_batches():
                lr = learning_rate_at(step, total, settings)
                for group in opt.param_groups:
                    group["lr"] = lr
                X = torch.from_numpy(np.ascontiguousarray(Xb, dtype=np.float64))
                y = torch.from_numpy(np.ascontiguousarray(yb, dtype=np.float64))
                opt.zero_grad(set_to_none=True)
                out = torch_forward(params, config, X)
                loss = torch_loss(out, y, config)
                loss.backward()
                opt.step()
                _project_readout_(params["readout.w"], config.readout_norm)
                with torch.no_grad():
                    run_loss += float(loss.detach()) * len(yb)
                    run_err += int((out * y <= 0).sum())
                    run_count += len(yb)
                step += 1
                if step % settings.log_every == 0 or step == total:
                    rec = {"epoch": epoch, "step": step, "lr": lr, "train_loss": run_loss / run_count,
                           "train_error": run_err / run_count}
                    history.append(rec)
                    if log:
                        log(f"epoch {epoch}  step {step:6d}/{total}  lr {lr:.2e}  loss {rec['train_loss']:.4f}  "
                            f"error {rec['train_error']:.4f}  ({time.perf_counter() - start:.0f} s)")
                    run_loss, run_err, run_count = 0.0, 0, 0
        model = PiTransformer(config, {k: v.detach().numpy().copy() for k, v in params.items()})
        return TrainResult(model, history, time.perf_counter() - start, settings, step)
    finally:
        torch.set_num_threads(old_threads)


def train_pi_transformer(
    config: PiTransformerConfig,
    X_train: np.ndarray,
    y_train: np.ndarray,
    settings: TrainSettings = TrainSettings(),
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Minibatch Adam on in-memory data (batches in order); readout projected onto ‖w‖ ≤ C_w after each step.

    Deterministic for a given (config, data, settings, torch version, thread count).
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    y_train = np.asarray(y_train, dtype=np.float64)
    n, b = len(y_train), settings.batch_size

    def batches():
        for s in range(0, n, b):
            yield s, X_train[s:s + b], y_train[s:s + b]

    return _train(config, n, batches, settings, log)


def train_demo_model(
    task: SparseMajorityTask,
    config: PiTransformerConfig,
    n_train: int,
    settings: TrainSettings,
    log: Callable[[str], None] | None = None,
    stream: int = 1,
) -> TrainResult:
    """Train on examples 0 … n_train − 1 of ``stream`` of ``task``, generated batch by batch (never all at once)."""
    return _train(config, n_train, lambda: task.batches(n_train, stream, settings.batch_size), settings, log)
