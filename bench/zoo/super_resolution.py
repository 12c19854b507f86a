"""OLLIE's super-resolution model: FSRCNN."""
from . import model

UPSCALE = 3
SIZE = 256


def _fsrcnn(scale, d=56, s=12, m=4):
    from torch import nn

    class FSRCNN(nn.Module):
        """FSRCNN (Dong et al. 2016, "Accelerating the Super-Resolution CNN"), FSRCNN(d=56, s=12, m=4) on a
        luminance (1-channel) image: 5x5 feature extraction, 1x1 shrink, m 3x3 mapping convs, 1x1 expand (all
        PReLU), then a 9x9 transposed conv with stride = the upscale factor."""

        def __init__(self):
            super().__init__()
            layers = [nn.Conv2d(1, d, 5, padding=2), nn.PReLU(d),  # feature extraction
                      nn.Conv2d(d, s, 1), nn.PReLU(s)]  # shrinking
            for _ in range(m):  # non-linear mapping
                layers += [nn.Conv2d(s, s, 3, padding=1), nn.PReLU(s)]
            layers += [nn.Conv2d(s, d, 1), nn.PReLU(d)]  # expanding
            self.body = nn.Sequential(*layers)
            self.deconv = nn.ConvTranspose2d(d, 1, 9, stride=scale, padding=4, output_padding=scale - 1)

        def forward(self, x):
            return self.deconv(self.body(x))

    return FSRCNN()


@model("fsrcnn", "OLLIE", f"FSRCNN(56,12,4) super-resolution x{UPSCALE}, luminance image 1x1x{SIZE}x{SIZE} "
       f"-> 1x1x{SIZE * UPSCALE}x{SIZE * UPSCALE}")
def fsrcnn():
    return _fsrcnn(UPSCALE), [(1, 1, SIZE, SIZE)]
