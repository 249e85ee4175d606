# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # certbound quick start: certified numbers for a model in memory
#
# This notebook builds a small BERT with `transformers` (random initialisation from a config — no model
# hub, nothing downloaded), hands the module itself to certbound, and gets
#
# 1. the **certified spectrum** of every matrix the theory uses (per-head $QK$, $VO$ and the two
#    feed-forward matrices of each layer) as a table — every number an enclosure (Arb ball) of the exact
#    value for the weights held in memory;
# 2. a **certified generalization-gap bound** (Theorem 2, post hoc) for the model's $\Pi$-surrogate
#    network, with its terms and what it assumes;
# 3. the same results as JSON and LaTeX files.
#
# The weights are never written to disk: float32 parameters widen exactly to float64.

# %%
import os

# One BLAS thread: the kernel's many small factorizations are faster without oversubscription.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import tempfile

import torch
import transformers

import certbound

# %% [markdown]
# ## A small BERT, in memory

# %%
config = transformers.BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=128, vocab_size=100, max_position_embeddings=32)
torch.manual_seed(0)
bert = transformers.BertModel(config).eval()

model = certbound.open_model(bert)  # reads bert.config and bert.state_dict(); nothing is saved
model

# %% [markdown]
# ## Certified spectra
#
# `model.spectra()` certifies all singular values of every theory matrix. The DataFrame has one row per
# matrix; its floats are the balls' ends rounded *outward* (`*_lower` down, `*_upper` up), and the balls
# themselves stay on the records (`spectra[i].spectral_norm`, `spectra[i].sigma`, ...).

# %%
spectra = model.spectra(progress=True)
frame = spectra.to_frame()
frame[["layer", "head", "type", "rows", "cols", "spectral_norm_upper", "frobenius_norm_upper",
       "rank_lower", "rank_upper"]]

# %%
qk = spectra.find(layer=1, type="QK", head=0)
print("sigma_1 of layer 1, head 0, QK lies in", qk.spectral_norm, "; certified rank in", qk.rank)
assert len(frame) == config.num_hidden_layers * (2 * config.num_attention_heads + 2)

# %% [markdown]
# ## A certified bound
#
# `model.bound(n, delta)` is what `certbound bound` prints: with probability at least $1-\delta$ over an
# i.i.d. sample of size $n$, $|R(f) - \hat R_S(f)| \le$ `bound` for the network that
# `result.assumptions["network"]` describes (the $\Pi$-surrogate: LayerNorm replaced by the row
# projection, biases and embeddings dropped — *not* the original BERT). Options are keyword arguments
# (`seq_len=`, `loss_bound=`, `residual=True`, ...); `delta=0.01` is read as the decimal 1/100.

# %%
from certbound.ball import decimal_upper

result = model.bound(n=10**6, delta=0.01)
print(result)
print("bound         <=", decimal_upper(result.bound, 6), "(the certified number: upper end, rounded up)")
print("Rademacher    :", result.rademacher_method, result.rademacher)
print("confidence    :", result.confidence_term)
for key, value in result.assumptions.items():
    print(f"  {key}: {value}")

# %%
result.to_frame().sort_values("contribution_upper", ascending=False).head(8)

# %% [markdown]
# ## Saving JSON and LaTeX
#
# `to_json()` is the document `certbound bound --json` writes (exact ball endpoints); `to_latex()` is the
# booktabs table of `--latex` (upper bounds rounded up).

# %%
from certbound.report.writers import atomic_write_text, json_text

out = tempfile.mkdtemp(prefix="certbound-quickstart-")
atomic_write_text(os.path.join(out, "bound.json"), json_text(result.to_json()))
atomic_write_text(os.path.join(out, "bound.tex"), result.to_latex())
atomic_write_text(os.path.join(out, "spectra.json"), json_text(spectra.to_json()))
spectra.to_csv(os.path.join(out, "spectra.csv"))
print(sorted(os.listdir(out)))
print(result.to_latex())
