"""Style transfer: the fast neural style network of the ONNX model zoo's "candy" (Korch's Candy)."""
from . import model


def _candy():
    from torch import nn

    class ConvLayer(nn.Module):
        """Reflection padding (k // 2) then a convolution, as in PyTorch's examples/fast_neural_style."""

        def __init__(self, cin, cout, kernel, stride):
            super().__init__()
            self.pad = nn.ReflectionPad2d(kernel // 2)
            self.conv = nn.Conv2d(cin, cout, kernel, stride)

        def forward(self, x):
            return self.conv(self.pad(x))

    class UpsampleConvLayer(nn.Module):
        """Nearest-neighbour 2x upsampling then a reflection-padded convolution (instead of ConvTranspose2d)."""

        def __init__(self, cin, cout, kernel, stride, upsample=2):
            super().__init__()
            self.up = nn.Upsample(scale_factor=upsample, mode="nearest")
            self.conv = ConvLayer(cin, cout, kernel, stride)

        def forward(self, x):
            return self.conv(self.up(x))

    class ResidualBlock(nn.Module):
        """Two 3x3 reflection-padded convs with affine InstanceNorm, ReLU between, plus the identity."""

        def __init__(self, channels):
            super().__init__()
            self.conv1 = ConvLayer(channels, channels, 3, 1)
            self.in1 = nn.InstanceNorm2d(channels, affine=True)
            self.conv2 = ConvLayer(channels, channels, 3, 1)
            self.in2 = nn.InstanceNorm2d(channels, affine=True)
            self.relu = nn.ReLU()

        def forward(self, x):
            y = self.relu(self.in1(self.conv1(x)))
            return self.in2(self.conv2(y)) + x

    class TransformerNet(nn.Module):
        """Johnson et al.'s image transformation network: 3 downsampling convs, 5 residual blocks,
        2 upsampling convs and a 9x9 output conv (examples/fast_neural_style's TransformerNet)."""

        def __init__(self):
            super().__init__()
            self.conv1 = ConvLayer(3, 32, 9, 1)
            self.in1 = nn.InstanceNorm2d(32, affine=True)
            self.conv2 = ConvLayer(32, 64, 3, 2)
            self.in2 = nn.InstanceNorm2d(64, affine=True)
            self.conv3 = ConvLayer(64, 128, 3, 2)
            self.in3 = nn.InstanceNorm2d(128, affine=True)
            self.res = nn.Sequential(*[ResidualBlock(128) for _ in range(5)])
            self.deconv1 = UpsampleConvLayer(128, 64, 3, 1, upsample=2)
            self.in4 = nn.InstanceNorm2d(64, affine=True)
            self.deconv2 = UpsampleConvLayer(64, 32, 3, 1, upsample=2)
            self.in5 = nn.InstanceNorm2d(32, affine=True)
            self.deconv3 = ConvLayer(32, 3, 9, 1)
            self.relu = nn.ReLU()

        def forward(self, x):
            y = self.relu(self.in1(self.conv1(x)))
            y = self.relu(self.in2(self.conv2(y)))
            y = self.relu(self.in3(self.conv3(y)))
            y = self.res(y)
            y = self.relu(self.in4(self.deconv1(y)))
            y = self.relu(self.in5(self.deconv2(y)))
            return self.deconv3(y)

    return TransformerNet()


@model("candy", "Korch", "Fast neural style transfer (ONNX zoo candy, Johnson et al.), image 1x3x224x224", quick=True)
def candy():
    import torch
    net = _candy()
    # Fresh affine InstanceNorm layers have weight 1 and bias 0: randomize them so they compute something.
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.InstanceNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return net, [(1, 3, 224, 224)]
