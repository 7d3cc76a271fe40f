"""The benchmark zoo (bench/zoo/zoo.py): models with random weights at realistic sizes.

Each entry is (name, a description, make() -> (eval-mode nn.Module, tuple of example inputs)).
Weights and inputs are seeded, so every run times the same computation. Sizes are the ones the
models are used at (224x224 images, sequence 128 for the transformer), not shrunk for tests:
what is timed is meant to look like real work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from common import paths

paths.on_path(paths.REPO / "examples")
from models import resnet18  # noqa: E402  (examples/models.py)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_generator(seed))


def _seeded(module: nn.Module, seed: int) -> nn.Module:
    """Reproducible random weights with a sane scale (1/sqrt(fan-in)), batch-norm statistics that
    are not the identity; returns the module in eval mode."""
    generator = _generator(seed)
    with torch.no_grad():
        for name, tensor in list(module.named_parameters()) + list(module.named_buffers()):
            if not tensor.is_floating_point():
                continue
            if name.endswith("running_var"):
                tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
            elif name.endswith("running_mean"):
                tensor.copy_(torch.randn(tensor.shape, generator=generator) * 0.1)
            elif name.endswith("weight") and tensor.dim() == 1:  # norm scales
                tensor.copy_(1.0 + 0.1 * torch.randn(tensor.shape, generator=generator))
            else:
                fan_in = tensor[0].numel() if tensor.dim() > 1 else tensor.numel()
                tensor.copy_(torch.randn(tensor.shape, generator=generator) / max(1, fan_in) ** 0.5)
    return module.eval()


# --- tiny: pure overhead -----------------------------------------------------------------------------


class Tiny(nn.Module):
    """x + y on [1, 16]: almost no work, so the time is the fixed cost of a call."""

    def forward(self, x, y):
        return x + y


# --- MLP ---------------------------------------------------------------------------------------------


class MLP(nn.Module):
    """784 -> 1024 -> 1024 -> 512 -> 10 with ReLU, batch 8 (about 1.9 M parameters)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
            nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 10),
        )

    def forward(self, x):
        return self.layers(x)


# --- MobileNetV2 -------------------------------------------------------------------------------------


def _conv_bn(cin: int, cout: int, kernel: int, stride: int, groups: int = 1, act: bool = True) -> nn.Sequential:
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [_conv_bn(cin, hidden, 1, 1)]
        layers += [_conv_bn(hidden, hidden, 3, stride, groups=hidden), _conv_bn(hidden, cout, 1, 1, act=False)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV2(nn.Module):
    """The MobileNetV2 (width 1.0) layout for 224x224 images and 1000 classes (3.5 M parameters)."""

    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))

    def __init__(self, classes: int = 1000):
        super().__init__()
        layers, channels = [_conv_bn(3, 32, 3, 2)], 32
        for expand, cout, repeats, stride in self.SETTINGS:
            for i in range(repeats):
                layers.append(InvertedResidual(channels, cout, stride if i == 0 else 1, expand))
                channels = cout
        layers.append(_conv_bn(channels, 1280, 1, 1))
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(1280, classes)

    def forward(self, x):
        return self.head(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


# --- transformer encoder -----------------------------------------------------------------------------


class Encoder(nn.Module):
    """Four nn.TransformerEncoderLayer (width 256, 4 heads, feed-forward 1024, batch_first) over a
    sequence of 128, and a final layer norm (3.2 M parameters)."""

    def __init__(self, width: int = 256, heads: int = 4, layers: int = 4):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width, dropout=0.0, activation="gelu",
                                       batch_first=True)
            for _ in range(layers)
        )
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


# --- segmentation ------------------------------------------------------------------------------------


class SegmentationNet(nn.Module):
    """A small U-Net: four strided encoder stages (32..256 channels), a decoder that upsamples
    bilinearly and concatenates the skip connections, 21 classes at full resolution; 1x3x256x256."""

    def __init__(self, classes: int = 21):
        super().__init__()
        widths = (32, 64, 128, 256)
        self.stem = nn.Sequential(_conv_bn(3, widths[0], 3, 1), _conv_bn(widths[0], widths[0], 3, 1))
        self.down = nn.ModuleList(
            nn.Sequential(_conv_bn(cin, cout, 3, 2), _conv_bn(cout, cout, 3, 1))
            for cin, cout in zip(widths, widths[1:])
        )
        self.up = nn.ModuleList(
            nn.Sequential(_conv_bn(cin + cout, cout, 3, 1), _conv_bn(cout, cout, 3, 1))
            for cin, cout in zip(widths[:0:-1], widths[-2::-1])
        )
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = [self.stem(x)]
        for stage in self.down:
            skips.append(stage(skips[-1]))
        y = skips.pop()
        for stage in self.up:
            skip = skips.pop()
            y = F.interpolate(y, size=skip.shape[-2:], mode="bilinear", align_corners=False)
            y = stage(torch.cat([y, skip], dim=1))
        return self.head(y)


# --- LSTM --------------------------------------------------------------------------------------------


class LSTMModel(nn.Module):
    """A two-layer LSTM (64 features, hidden 256) over 32 steps, batch 1, a linear head on the last step."""

    def __init__(self, features: int = 64, hidden: int = 256, classes: int = 32):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


# --- embedding + pooling -----------------------------------------------------------------------------


class EmbeddingPool(nn.Module):
    """Token ids (int64, 8 x 128) -> embedding (30 000 x 128) -> mean over the sequence -> two-layer
    classifier (3.9 M parameters, most of them the table)."""

    def __init__(self, vocab: int = 30000, dim: int = 128, classes: int = 16):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.fc1 = nn.Linear(dim, 256)
        self.fc2 = nn.Linear(256, classes)

    def forward(self, tokens):
        pooled = self.embedding(tokens).mean(dim=1)
        return self.fc2(F.relu(self.fc1(pooled)))


# --- the zoo -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZooModel:
    name: str
    description: str
    make: Callable[[], Tuple[nn.Module, Tuple]]


def _resnet18():
    return resnet18(seed=4)


ZOO = [
    ZooModel("tiny", "add of two [1,16] tensors (pure fixed cost)",
             lambda: (Tiny().eval(), (_randn(1, 16, seed=1), _randn(1, 16, seed=2)))),
    ZooModel("mlp", "MLP 784-1024-1024-512-10, batch 8",
             lambda: (_seeded(MLP(), 2), (_randn(8, 784, seed=3),))),
    ZooModel("mobilenet_v2", "MobileNetV2 1.0, 1x3x224x224",
             lambda: (_seeded(MobileNetV2(), 3), (_randn(1, 3, 224, 224, seed=4),))),
    ZooModel("resnet18", "ResNet-18 (examples/models.py), 1x3x224x224", _resnet18),
    ZooModel("transformer", "4 encoder layers, width 256, 4 heads, seq 128, batch_first",
             lambda: (_seeded(Encoder(), 5), (_randn(1, 128, 256, seed=6),))),
    ZooModel("segmentation", "U-Net style encoder-decoder, bilinear upsampling, 1x3x256x256",
             lambda: (_seeded(SegmentationNet(), 7), (_randn(1, 3, 256, 256, seed=8),))),
    ZooModel("lstm", "2-layer LSTM, 64->256, 32 steps, batch 1",
             lambda: (_seeded(LSTMModel(), 9), (_randn(1, 32, 64, seed=10),))),
    ZooModel("embedding", "embedding 30000x128 + mean pooling + MLP, tokens 8x128",
             lambda: (_seeded(EmbeddingPool(), 11), (torch.randint(0, 30000, (8, 128), generator=_generator(12)),))),
]

ZOO_BY_NAME = {model.name: model for model in ZOO}
