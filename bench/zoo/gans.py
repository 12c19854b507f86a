"""OLLIE's GAN generators: InfoGAN (MNIST) and DCGAN (64x64 images).

Their batch-1 latency is tiny, so they run at a larger batch to keep the
timing well above noise (>= ~5 ms in ONNX Runtime at 2 threads): DCGAN at
OLLIE's batch 16, InfoGAN (much smaller) at batch 32.
"""
from . import model

INFOGAN_BATCH = 32
DCGAN_BATCH = 16


def _infogan_generator():
    from torch import nn

    class InfoGANGenerator(nn.Module):
        """InfoGAN generator for MNIST (Chen et al. 2016): a 74-d latent (62 noise, 10-way categorical code,
        2 continuous codes) -> FC 1024 -> FC 128x7x7 -> two 4x4 stride-2 transposed convs -> 1x28x28 image."""

        def __init__(self, latent=74):
            super().__init__()
            self.fc = nn.Sequential(
                nn.Linear(latent, 1024), nn.BatchNorm1d(1024), nn.ReLU(),
                nn.Linear(1024, 128 * 7 * 7), nn.BatchNorm1d(128 * 7 * 7), nn.ReLU())
            self.deconv = nn.Sequential(
                nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),  # 7 -> 14
                nn.ConvTranspose2d(64, 1, 4, stride=2, padding=1), nn.Tanh())  # 14 -> 28

        def forward(self, z):
            x = self.fc(z)
            return self.deconv(x.reshape(x.shape[0], 128, 7, 7))

    return InfoGANGenerator()


def _dcgan_generator():
    from torch import nn

    class DCGANGenerator(nn.Module):
        """DCGAN generator (Radford et al. 2016): a 100x1x1 latent -> 4x4 transposed conv to 512x4x4, then
        4x4 stride-2 transposed convs to 256x8x8, 128x16x16, 64x32x32 (BatchNorm + ReLU) and 3x64x64 (Tanh)."""

        def __init__(self, latent=100, ngf=64, channels=3):
            super().__init__()

            def up(cin, cout):
                return [nn.ConvTranspose2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True)]

            self.main = nn.Sequential(
                nn.ConvTranspose2d(latent, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
                *up(ngf * 8, ngf * 4), *up(ngf * 4, ngf * 2), *up(ngf * 2, ngf),
                nn.ConvTranspose2d(ngf, channels, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, z):
            return self.main(z)

    return DCGANGenerator()


@model("infogan", "OLLIE", f"InfoGAN generator (MNIST, latent 74 -> 1x28x28), batch {INFOGAN_BATCH} "
       f"(batch 1 is too fast to time): input {INFOGAN_BATCH}x74", quick=True)
def infogan():
    return _infogan_generator(), [(INFOGAN_BATCH, 74)]


@model("dcgan", "OLLIE", f"DCGAN generator (latent 100x1x1 -> 3x64x64), batch {DCGAN_BATCH} "
       f"(batch 1 is too fast to time): input {DCGAN_BATCH}x100x1x1", quick=True)
def dcgan():
    return _dcgan_generator(), [(DCGAN_BATCH, 100, 1, 1)]
