"""A small ResNet for 32x32 RGB images (Fashion-MNIST padded and repeated to 3 channels).

Imported by prepare.py (which scripts and saves it) and train_reference.py (which trains
the same network eagerly). Layout, as in He et al.'s CIFAR ResNets:

    stem: conv3x3(3 -> w0) - BN - ReLU
    stage s: blocks[s] BasicBlocks of width widths[s]; every stage after the first starts
             with a stride-2 block whose shortcut is a 1x1 conv + BN projection
    global average pool - linear(widths[-1] -> num_classes)

forward(x: float [B, 3, 32, 32]) -> logits [B, num_classes].
"""
from typing import List, Sequence

import torch
from torch import Tensor, nn


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN layers plus the identity (or a 1x1 projection when the shape changes)."""

    def __init__(self, in_ch: int, out_ch: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        # An empty Sequential is the identity and keeps the module scriptable either way.
        self.shortcut = nn.Sequential()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_ch),
            )

    def forward(self, x: Tensor) -> Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, widths: Sequence[int] = (16, 32, 64), blocks: Sequence[int] = (1, 1, 1),
                 num_classes: int = 10, in_channels: int = 3):
        super().__init__()
        if len(widths) != len(blocks) or not widths:
            raise ValueError("widths and blocks need one entry per stage")
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, widths[0], 3, padding=1, bias=False),
            nn.BatchNorm2d(widths[0]),
            nn.ReLU(inplace=True),
        )
        layers: List[nn.Module] = []
        in_ch = widths[0]
        for stage, (width, count) in enumerate(zip(widths, blocks)):
            for i in range(count):
                stride = 2 if stage > 0 and i == 0 else 1
                layers.append(BasicBlock(in_ch, width, stride))
                in_ch = width
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(in_ch, num_classes)
        self._init_weights()

    def _init_weights(self) -> None:
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.layers(self.stem(x))
        x = x.mean(dim=(2, 3))  # global average pool: [B, C]
        return self.fc(x)


def build(widths: Sequence[int], blocks: Sequence[int], seed: int) -> ResNet:
    """The network with a deterministic initialization: same seed, same weights."""
    torch.manual_seed(seed)
    return ResNet(widths, blocks)


def int_list(text: str) -> List[int]:
    """argparse type for '16,32,64'."""
    return [int(v) for v in text.split(",") if v]
