"""A zoo of small, realistic models for the lowering tests (tests/python/models/test_lowering_zoo.py).

Every entry has random weights (seeded) and sizes small enough that the whole zoo exports, lowers,
runs and compares in well under two minutes on two cores. An entry holds:

  name          the pytest id
  make_model    () -> nn.Module (in eval mode is the test's job)
  make_inputs   () -> tuple of example inputs (the same values are passed to `execute`)
  outside_ops   how many operators the lowered program leaves on ExecuTorch's own kernels
                (0: fully delegated; otherwise the reason is a comment at the entry)
  rel_tol       fp32 tolerance relative to the output scale: max |out - eager| must be
                <= rel_tol * max(1, max |eager|). The global bound is 1e-4; an entry that needs
                more says why in `note`.
  note          one line: what the model exercises, and the reason for any looser bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import torch
import torch.nn.functional as F
from torch import nn

GLOBAL_REL_TOL = 1e-4


@dataclass(frozen=True)
class ZooEntry:
    name: str
    make_model: Callable[[], nn.Module]
    make_inputs: Callable[[], Tuple]
    outside_ops: int = 0
    rel_tol: float = GLOBAL_REL_TOL
    note: str = ""


def _seeded(seed: int):
    """A generator for reproducible example inputs that does not touch the global RNG."""
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_seeded(seed))


def _init(module: nn.Module, seed: int) -> nn.Module:
    """Re-initialises every parameter and buffer reproducibly (batch-norm statistics included, so
    the normalisation is not the identity)."""
    generator = _seeded(seed)
    with torch.no_grad():
        for name, tensor in list(module.named_parameters()) + list(module.named_buffers()):
            if not tensor.is_floating_point():
                continue
            if name.endswith("running_var"):
                tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
            elif name.endswith("running_mean"):
                tensor.copy_(torch.randn(tensor.shape, generator=generator) * 0.1)
            else:
                fan_in = tensor[0].numel() if tensor.dim() > 1 else tensor.numel()
                tensor.copy_(torch.randn(tensor.shape, generator=generator) / max(1, fan_in) ** 0.5)
    return module


# ---------------------------------------------------------------------------------------------
# The models


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class SmallCNN(nn.Module):
    """conv / batch norm / relu / max pool, conv / batch norm / relu / avg pool, then a classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.avg_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


class DepthwiseSeparable(nn.Module):
    """MobileNet's block: depthwise 3x3 conv (groups = channels), BN, ReLU6, pointwise 1x1, BN, ReLU6."""

    def __init__(self, channels: int = 32, out_channels: int = 64):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, stride=2, padding=1, groups=channels, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pointwise = nn.Conv2d(channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        x = F.relu6(self.bn1(self.depthwise(x)))
        return F.relu6(self.bn2(self.pointwise(x)))


class ResidualBlock(nn.Module):
    """ResNet's basic block with a strided 1x1 projection on the shortcut."""

    def __init__(self, channels: int = 16, out_channels: int = 32):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut = nn.Sequential(nn.Conv2d(channels, out_channels, 1, stride=2, bias=False), nn.BatchNorm2d(out_channels))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + self.shortcut(x))


class TransformerEncoder(nn.Module):
    """nn.TransformerEncoderLayer (batch_first, GELU, pre-norm) and a final layer norm."""

    def __init__(self, d_model: int = 64, heads: int = 4):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=128, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm(self.layer(x))


class HandWrittenAttention(nn.Module):
    """Multi-head self-attention written out (q/k/v projections, scaled scores, additive causal
    mask, softmax), a GELU feed-forward and post-norm layer norms."""

    def __init__(self, d_model: int = 64, heads: int = 4, seq: int = 16):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, 4 * d_model)
        self.ff2 = nn.Linear(4 * d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5 + self.mask
        attention = torch.softmax(scores, dim=-1) @ v
        x = self.norm1(x + self.proj(attention.transpose(1, 2).reshape(b, t, d)))
        return self.norm2(x + self.ff2(F.gelu(self.ff1(x))))


class EmbeddingClassifier(nn.Module):
    """Token ids (int64) -> embedding -> mean over the sequence -> linear."""

    def __init__(self, vocab: int = 100, dim: int = 32, classes: int = 5):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.fc(self.embedding(tokens).mean(dim=1))


class LSTMTagger(nn.Module):
    """A two-layer LSTM over a short sequence, a linear head on every step."""

    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 8):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


class GRUEncoder(nn.Module):
    """A GRU whose final hidden state feeds a linear head."""

    def __init__(self, features: int = 16, hidden: int = 32, classes: int = 4):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


class Upsampler(nn.Module):
    """Nearest (scale factor 2) and bilinear (to a size, align_corners False and True) upsampling
    around a conv, as in a small decoder."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        nearest = F.interpolate(x, scale_factor=2, mode="nearest")
        y = self.conv(nearest)
        bilinear = F.interpolate(y, size=(24, 24), mode="bilinear", align_corners=False)
        corners = F.interpolate(y, size=(24, 24), mode="bilinear", align_corners=True)
        return bilinear + corners


class ShapeOps(nn.Module):
    """A chain of cat / split / slice / permute / reshape / transpose / unsqueeze / flatten."""

    def forward(self, x, y):
        z = torch.cat([x, y], dim=1)  # (2, 12, 8, 6)
        a, b, c = torch.split(z, [4, 4, 4], dim=1)
        a = a[:, :, 1:7:2, :]  # (2, 4, 3, 6)
        b = b.permute(0, 3, 2, 1)  # (2, 6, 8, 4)
        c = c.reshape(2, 4, 48).transpose(1, 2)  # (2, 48, 4)
        d = torch.cat([a.reshape(2, -1), b.flatten(1), c.flatten(1)], dim=1)
        return d.unsqueeze(1)[..., 10:-10]


class Reductions(nn.Module):
    """mean / sum / amax / amin over several axes, with and without keepdim."""

    def forward(self, x):
        m = x.mean(dim=(2, 3))
        s = x.sum(dim=1, keepdim=True)
        a = torch.amax(x, dim=-1)
        n = torch.amin(x, dim=(1, 3), keepdim=True)
        return m.sum(dim=-1) + s.mean() * a.mean(dim=(1, 2)) - n.flatten(1).amax(dim=1)


class Broadcasting(nn.Module):
    """add / mul / sub / div / where / maximum / minimum between tensors of broadcastable shapes,
    and with scalars."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.linspace(0.5, 2.0, 8).reshape(1, 1, 8))

    def forward(self, x, y, z):
        # x: (4, 6, 8), y: (6, 1), z: (4, 1, 8)
        a = x + y
        b = a * z - self.scale
        c = b / (y.abs() + 1.0)
        d = torch.where(x > z, c, y - z)
        e = torch.maximum(d, z * 0.5)
        return torch.minimum(e, a) * 2.0 - 1.0


class MultiOutput(nn.Module):
    """Three outputs of different dtypes: float logits, an int64 argmax and a bool mask."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        logits = self.fc(x)
        return logits, logits.argmax(dim=-1), logits > 0


class IntArgument(nn.Module):
    """forward(x, n: int): n (specialised at export) repeats and scales the input."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x, n: int):
        y = self.fc(x).repeat(1, n)  # (2, 16 n)
        return y.reshape(2, n, 16).sum(dim=1) * n


class SoftmaxClassifier(nn.Module):
    """Linear -> layer norm -> SiLU -> linear -> log_softmax; also softmax probabilities."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.norm = nn.LayerNorm(64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        logits = self.fc2(F.silu(self.norm(self.fc1(x))))
        return F.log_softmax(logits, dim=-1), torch.softmax(logits, dim=-1)


# ---------------------------------------------------------------------------------------------
# The zoo

# Reported bug (partition/op_support.py + preprocess.py): to_edge turns aten.clone
# and aten._to_copy into ExecuTorch's dim_order_ops._clone_dim_order / _to_dim_order_copy, which
# OpenVINO's PyTorch frontend does not know, so the partitioner refuses them ("Model wasn't fully
# converted") and splits the graph around them. With contiguous dim orders they are aten.clone /
# aten._to_copy (ExecuTorch's DimOrderOpsRevertPass rewrites them back; its own OpenVINO backend
# does exactly that), after which these models are fully delegated.


def _model(cls, seed: int, *args) -> Callable[[], nn.Module]:
    return lambda: _init(cls(*args), seed)


ZOO = [
    ZooEntry("mlp", _model(MLP, 1), lambda: (_randn(8, 64, seed=101),), note="linear, relu, tanh"),
    ZooEntry("cnn", _model(SmallCNN, 2), lambda: (_randn(2, 3, 32, 32, seed=102),),
             note="conv2d, batch norm, relu, max pool, avg pool, flatten, linear"),
    ZooEntry("depthwise_separable", _model(DepthwiseSeparable, 3), lambda: (_randn(2, 32, 16, 16, seed=103),),
             note="grouped (depthwise) conv, pointwise conv, batch norm, relu6"),
    ZooEntry("residual_block", _model(ResidualBlock, 4), lambda: (_randn(2, 16, 16, 16, seed=104),),
             note="strided convs, batch norm, projection shortcut, add"),
    ZooEntry("transformer_encoder_layer", _model(TransformerEncoder, 5), lambda: (_randn(2, 16, 64, seed=105),),
             note="nn.TransformerEncoderLayer (batch_first, norm_first, gelu): attention, softmax, layer norm"),
    ZooEntry("hand_written_attention", _model(HandWrittenAttention, 6), lambda: (_randn(2, 16, 64, seed=106),),
             note="q/k/v split, matmul, causal -inf mask, softmax, gelu, layer norm"),
    ZooEntry("embedding_linear", _model(EmbeddingClassifier, 7),
             lambda: (torch.randint(0, 100, (4, 12), generator=_seeded(107)),),
             note="int64 token ids, embedding, mean, linear"),
    ZooEntry("lstm", _model(LSTMTagger, 8), lambda: (_randn(2, 10, 16, seed=108),),
             note="two-layer LSTM (decomposed by to_edge into per-step matmuls and gates)"),
    ZooEntry("gru", _model(GRUEncoder, 9), lambda: (_randn(2, 10, 16, seed=109),), note="GRU, final hidden state"),
    ZooEntry("interpolate", _model(Upsampler, 10), lambda: (_randn(1, 8, 6, 6, seed=110),),
             note="nearest x2 and bilinear (align_corners False / True) upsampling"),
    ZooEntry("shape_ops", lambda: ShapeOps(), lambda: (_randn(2, 5, 8, 6, seed=111), _randn(2, 7, 8, 6, seed=112)),
             note="cat, split, strided slice, permute, reshape, transpose, unsqueeze, negative slice"),
    ZooEntry("reductions", lambda: Reductions(), lambda: (_randn(3, 4, 5, 6, seed=113),),
             note="mean, sum, amax, amin, keepdim"),
    ZooEntry("broadcasting", lambda: Broadcasting(),
             lambda: (_randn(4, 6, 8, seed=114), _randn(6, 1, seed=115), _randn(4, 1, 8, seed=116)),
             note="add, mul, sub, div, where, maximum, minimum with broadcasting and scalars"),
    ZooEntry("multi_output", _model(MultiOutput, 14), lambda: (_randn(6, 32, seed=117),),
             note="float32 logits, int64 argmax, bool comparison as three outputs"),
    ZooEntry("int_argument", _model(IntArgument, 15), lambda: (_randn(2, 16, seed=118), 3),
             note="a Python int input, specialised by torch.export; passed again at run time"),
    ZooEntry("softmax_classifier", _model(SoftmaxClassifier, 16), lambda: (_randn(4, 32, seed=119),),
             note="layer norm, silu, softmax, log_softmax; two outputs"),
]

ZOO_BY_NAME = {entry.name: entry for entry in ZOO}
