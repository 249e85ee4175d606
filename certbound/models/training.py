"""Training the Π-Transformer with torch (optional extra ``certbound[torch]``).

torch is imported inside the functions, so this module imports without it.
The torch forward pass is a literal transcription of
:meth:`certbound.models.network.PiTransformer.forward` on float64 tensors
(tests check they agree). Training is deterministic given the seed: weights
start from the version-stable raw PCG64 stream
(:meth:`PiTransformer.random`), data come from the task's raw stream,
``torch.use_deterministic_algorithms(True)`` is set, the thread count is
fixed, and full-batch Adam is used (no shuffling).

After every optimiser step the readout is projected onto ‖w‖₂ ≤ C_w (the
constraint the loss range and the bound rely on); all other matrices are free
(the post hoc bound certifies whatever norms they end with).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

from certbound.models.config import PiTransformerConfig
from certbound.models.network import PiTransformer
from certbound.models.task import SparseMajorityTask

__all__ = ["TrainSettings", "TrainResult", "torch_forward", "torch_loss", "train_pi_transformer", "train_demo_model"]


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
    """f(X) for a batch X (B, T, N) of float64 tensors; same operations as the numpy forward."""
    torch = _torch()
    dh = config.d_head
    X = _project_rows_torch(X)
    for layer in range(config.n_layers):
        p = f"blocks.{layer}"
        att = torch.zeros_like(X)
        for head in range(config.n_heads):
            s = slice(head * dh, (head + 1) * dh)
            q = X @ params[f"{p}.attn.W_Q"][:, s]
            k = X @ params[f"{p}.attn.W_K"][:, s]
            v = (X @ params[f"{p}.attn.W_V"][:, s]) @ params[f"{p}.attn.W_O"][s, :]
            att = att + torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
        Y = _project_rows_torch(X + att if config.residual else att)
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
    """Optimisation settings (all recorded in the checkpoint's config.json)."""

    seed: int = 0
    epochs: int = 300
    learning_rate: float = 0.02
    weight_decay: float = 0.0
    init_scale: float = 1.0
    threads: int = 1


@dataclass
class TrainResult:
    """A trained model and its training record."""

    model: PiTransformer
    history: list[dict[str, float]]
    seconds: float
    settings: TrainSettings

    def record(self) -> dict[str, Any]:
        return {"settings": asdict(self.settings), "seconds": round(self.seconds, 3),
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


def train_pi_transformer(
    config: PiTransformerConfig,
    X_train: np.ndarray,
    y_train: np.ndarray,
    settings: TrainSettings = TrainSettings(),
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Full-batch Adam on the configured loss; readout projected onto ‖w‖ ≤ C_w after each step.

    Deterministic for a given (config, data, settings, torch version, thread count).
    """
    torch = _torch()
    torch.manual_seed(settings.seed)
    torch.use_deterministic_algorithms(True)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, int(settings.threads)))
    try:
        start = time.perf_counter()
        init = PiTransformer.random(config, seed=settings.seed, scale=settings.init_scale)
        params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in sorted(init.params.items())}
        X = torch.tensor(np.asarray(X_train, dtype=np.float64))
        y = torch.tensor(np.asarray(y_train, dtype=np.float64))
        opt = torch.optim.Adam(list(params.values()), lr=settings.learning_rate,
                               weight_decay=settings.weight_decay)
        history: list[dict[str, float]] = []
        for epoch in range(settings.epochs):
            opt.zero_grad(set_to_none=True)
            out = torch_forward(params, config, X)
            loss = torch_loss(out, y, config)
            loss.backward()
            opt.step()
            _project_readout_(params["readout.w"], config.readout_norm)
            if epoch % 25 == 0 or epoch == settings.epochs - 1:
                with torch.no_grad():
                    err = float((out * y <= 0).double().mean())
                history.append({"epoch": epoch, "train_loss": float(loss.detach()), "train_error": err})
                if log:
                    log(f"epoch {epoch:4d}  loss {float(loss.detach()):.4f}  error {err:.4f}")
        model = PiTransformer(config, {k: v.detach().numpy().copy() for k, v in params.items()})
        return TrainResult(model, history, time.perf_counter() - start, settings)
    finally:
        torch.set_num_threads(old_threads)


def train_demo_model(
    task: SparseMajorityTask,
    config: PiTransformerConfig,
    n_train: int,
    settings: TrainSettings,
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train on ``n_train`` examples of stream 1 of ``task`` (the demo's training set)."""
    X, y = task.sample(n_train, stream=1)
    return train_pi_transformer(config, X, y, settings, log=log)
