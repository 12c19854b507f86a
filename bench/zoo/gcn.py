"""OLLIE's GCN: Global Convolutional Network for semantic segmentation (large separable k x 1 / 1 x k kernels)."""
from . import model

SIZE = 512
CLASSES = 21
K = 15


def _gcn(backbone="resnet18", classes=CLASSES, k=K):
    import torchvision
    from torch import nn

    class GlobalConv(nn.Module):
        """GCN module (Peng et al. 2017, "Large Kernel Matters"): a k x k receptive field from two separable
        branches, (k x 1 then 1 x k) + (1 x k then k x 1), no nonlinearity in between."""

        def __init__(self, cin, cout, k):
            super().__init__()
            p = k // 2
            self.left = nn.Sequential(nn.Conv2d(cin, cout, (k, 1), padding=(p, 0)),
                                      nn.Conv2d(cout, cout, (1, k), padding=(0, p)))
            self.right = nn.Sequential(nn.Conv2d(cin, cout, (1, k), padding=(0, p)),
                                       nn.Conv2d(cout, cout, (k, 1), padding=(p, 0)))

        def forward(self, x):
            return self.left(x) + self.right(x)

    class BoundaryRefine(nn.Module):
        """Boundary Refinement block: a residual branch x + conv3x3(relu(conv3x3(x)))."""

        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(c, c, 3, padding=1)

        def forward(self, x):
            return x + self.conv2(self.relu(self.conv1(x)))

    class GCNSegmenter(nn.Module):
        """The whole network: a ResNet backbone (no fc); on each of its four stages (1/4 .. 1/32) a GCN module
        and a BR block; from the deepest stage up, a 2x transposed-conv upsampling, summed with the next stage's
        score map and refined by a BR block; then two more 2x upsamplings (with BR) back to full resolution."""

        def __init__(self):
            super().__init__()
            net = getattr(torchvision.models, backbone)(weights=None)
            self.stem = nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool)
            self.stages = nn.ModuleList([net.layer1, net.layer2, net.layer3, net.layer4])
            widths = [m[-1].conv3.out_channels if hasattr(m[-1], "conv3") else m[-1].conv2.out_channels
                      for m in self.stages]
            self.gcn = nn.ModuleList([GlobalConv(w, classes, k) for w in widths])
            self.br = nn.ModuleList([BoundaryRefine(classes) for _ in widths])
            self.up = nn.ModuleList([nn.ConvTranspose2d(classes, classes, 4, stride=2, padding=1)
                                     for _ in range(len(widths) - 1 + 2)])
            self.br_merge = nn.ModuleList([BoundaryRefine(classes) for _ in range(len(widths) - 1 + 2)])

        def forward(self, x):
            x = self.stem(x)
            feats = []
            for stage in self.stages:
                x = stage(x)
                feats.append(x)
            scores = [br(g(f)) for f, g, br in zip(feats, self.gcn, self.br)]
            y = scores[-1]
            for i, s in enumerate(reversed(scores[:-1])):  # 1/32 -> 1/16 -> 1/8 -> 1/4
                y = self.br_merge[i](self.up[i](y) + s)
            for i in range(len(scores) - 1, len(self.up)):  # 1/4 -> 1/2 -> 1/1
                y = self.br_merge[i](self.up[i](y))
            return y

    return GCNSegmenter()


@model("gcn", "OLLIE", f"Global Convolutional Network (Large Kernel Matters; ResNet-18 backbone, k={K}, "
       f"{CLASSES} classes) segmentation, image 1x3x{SIZE}x{SIZE}")
def gcn():
    return _gcn(), [(1, 3, SIZE, SIZE)]
