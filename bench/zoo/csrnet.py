"""OLLIE's CSRNet: crowd counting with dilated convolutions."""
from . import model

SIZE = 224


def _csrnet():
    from torch import nn

    class CSRNet(nn.Module):
        """CSRNet (Li et al. 2018): front-end = VGG-16's first 10 3x3 convs (with its 3 max pools, 1/8
        resolution); back-end = six 3x3 convs with dilation 2 (512, 512, 512, 256, 128, 64 channels); a 1x1
        conv to a one-channel density map. ReLU after every conv but the last."""

        def __init__(self):
            super().__init__()
            front = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512]
            back = [512, 512, 512, 256, 128, 64]
            self.frontend = self._layers(front, 3, dilation=1)
            self.backend = self._layers(back, 512, dilation=2)
            self.output = nn.Conv2d(64, 1, 1)
            # He initialization: PyTorch's default shrinks the activations ~2x per conv+ReLU, so after 16 convs
            # (no BatchNorm) the density map would be a constant (pretrained VGG weights keep their scale).
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, nonlinearity="relu")

        @staticmethod
        def _layers(cfg, cin, dilation):
            layers = []
            for v in cfg:
                if v == "M":
                    layers.append(nn.MaxPool2d(2, 2))
                else:
                    layers += [nn.Conv2d(cin, v, 3, padding=dilation, dilation=dilation), nn.ReLU(inplace=True)]
                    cin = v
            return nn.Sequential(*layers)

        def forward(self, x):
            return self.output(self.backend(self.frontend(x)))

    return CSRNet()


@model("csrnet", "OLLIE", f"CSRNet crowd counting (VGG-16 front-end, dilation-2 back-end), image 1x3x{SIZE}x{SIZE}")
def csrnet():
    return _csrnet(), [(1, 3, SIZE, SIZE)]
