"""U-Net (Ronneberger et al., 2015), padded convolutions as in most current uses: an encoder of
double 3x3 conv blocks and 2x2 max pools, a decoder of 2x2 stride-2 ConvTransposes whose output is
concatenated with the encoder's skip tensor, a 1x1 conv to the classes."""
import torch
from torch import nn

from . import model


class DoubleConv(nn.Sequential):
    """(3x3 conv, BatchNorm, ReLU) twice."""

    def __init__(self, in_ch, out_ch):
        super().__init__(nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True),
                         nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))


class Up(nn.Module):
    """2x2 stride-2 ConvTranspose halving the channels, Concat with the skip tensor, DoubleConv."""

    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, in_ch // 2, 2, stride=2)
        self.conv = DoubleConv(in_ch, out_ch)

    def forward(self, x, skip):
        return self.conv(torch.cat([skip, self.up(x)], dim=1))


class UNet(nn.Module):
    def __init__(self, in_ch=3, classes=2, base=16, levels=4):
        super().__init__()
        widths = [base * 2 ** i for i in range(levels + 1)]
        self.inc = DoubleConv(in_ch, widths[0])
        self.down = nn.ModuleList(nn.Sequential(nn.MaxPool2d(2), DoubleConv(widths[i], widths[i + 1]))
                                  for i in range(levels))
        self.up = nn.ModuleList(Up(widths[i + 1], widths[i]) for i in reversed(range(levels)))
        self.outc = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.down:
            skips.append(down(skips[-1]))
        x = skips.pop()
        for up in self.up:
            x = up(x, skips.pop())
        return self.outc(x)


@model("unet", "common", "U-Net (4 levels, widths 16-256, ConvTranspose 2x2/2 decoder, skip Concats), "
       "image 1x3x256x256")
def unet():
    return UNet(), [(1, 3, 256, 256)]
