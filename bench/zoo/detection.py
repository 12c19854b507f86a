"""Object detection: YOLOv4 (CSPDarknet53 + SPP + PANet) and YOLOX-Nano, Korch's detection models.

Both end at their raw head outputs: no box decoding, no NMS.
"""
from . import model


def _yolov4(num_outputs=255):
    import torch
    from torch import nn

    class Mish(nn.Module):
        """Mish activation, written out so that it exports as Softplus, Tanh and Mul."""

        def forward(self, x):
            return x * torch.tanh(nn.functional.softplus(x))

    class ConvBnAct(nn.Module):
        """Darknet's convolutional layer: Conv (no bias, 'same' padding), BatchNorm, then Mish or LeakyReLU(0.1)."""

        def __init__(self, cin, cout, kernel, stride=1, act="mish"):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, bias=False)
            self.bn = nn.BatchNorm2d(cout)
            self.act = Mish() if act == "mish" else nn.LeakyReLU(0.1)

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class ResBlock(nn.Module):
        """Darknet residual unit: 1x1 conv (hidden channels) then 3x3 conv, plus the identity."""

        def __init__(self, channels, hidden):
            super().__init__()
            self.conv1 = ConvBnAct(channels, hidden, 1)
            self.conv2 = ConvBnAct(hidden, channels, 3)

        def forward(self, x):
            return x + self.conv2(self.conv1(x))

    class CSPStage(nn.Module):
        """One CSPDarknet53 downsampling stage: a stride-2 3x3 conv, then a cross-stage-partial split:
        one 1x1 branch goes through n residual units and a 1x1 conv, the other is a plain 1x1 conv;
        the two are concatenated and fused by a 1x1 conv. The first stage (n=1) keeps full width
        inside (64 channels, residual hidden 32), the others halve it, as in yolov4.cfg."""

        def __init__(self, cin, cout, n, first=False):
            super().__init__()
            inner = cout if first else cout // 2
            self.down = ConvBnAct(cin, cout, 3, 2)
            self.split_route = ConvBnAct(cout, inner, 1)
            self.split_main = ConvBnAct(cout, inner, 1)
            self.blocks = nn.Sequential(*[ResBlock(inner, cout // 2 if first else inner) for _ in range(n)])
            self.post = ConvBnAct(inner, inner, 1)
            self.fuse = ConvBnAct(2 * inner, cout, 1)

        def forward(self, x):
            x = self.down(x)
            route = self.split_route(x)
            main = self.post(self.blocks(self.split_main(x)))
            return self.fuse(torch.cat([main, route], 1))

    class CSPDarknet53(nn.Module):
        """YOLOv4's backbone: a 3x3 stem (32 channels) and five CSP stages with 1, 2, 8, 8, 4 residual
        units (64, 128, 256, 512, 1024 channels); returns the stride 8, 16 and 32 features."""

        def __init__(self):
            super().__init__()
            self.stem = ConvBnAct(3, 32, 3)
            self.stage1 = CSPStage(32, 64, 1, first=True)
            self.stage2 = CSPStage(64, 128, 2)
            self.stage3 = CSPStage(128, 256, 8)
            self.stage4 = CSPStage(256, 512, 8)
            self.stage5 = CSPStage(512, 1024, 4)

        def forward(self, x):
            x = self.stage2(self.stage1(self.stem(x)))
            c3 = self.stage3(x)
            c4 = self.stage4(c3)
            c5 = self.stage5(c4)
            return c3, c4, c5

    def leaky(cin, cout, kernel, stride=1):
        return ConvBnAct(cin, cout, kernel, stride, act="leaky")

    def five_convs(cin, c):
        """The neck's alternating 1x1 (c) / 3x3 (2c) stack of five leaky convs."""
        return nn.Sequential(leaky(cin, c, 1), leaky(c, 2 * c, 3), leaky(2 * c, c, 1), leaky(c, 2 * c, 3),
                             leaky(2 * c, c, 1))

    class SPP(nn.Module):
        """Spatial pyramid pooling: stride-1 max pools of 5, 9 and 13 concatenated with the input."""

        def __init__(self):
            super().__init__()
            self.pools = nn.ModuleList([nn.MaxPool2d(k, 1, k // 2) for k in (13, 9, 5)])

        def forward(self, x):
            return torch.cat([p(x) for p in self.pools] + [x], 1)

    class Neck(nn.Module):
        """SPP block on the stride-32 feature, then PANet's top-down path (upsample, lateral 1x1 conv,
        concat, five convs) down to stride 8; leaky ReLU throughout as in yolov4.cfg."""

        def __init__(self):
            super().__init__()
            self.pre_spp = nn.Sequential(leaky(1024, 512, 1), leaky(512, 1024, 3), leaky(1024, 512, 1))
            self.spp = SPP()
            self.post_spp = nn.Sequential(leaky(2048, 512, 1), leaky(512, 1024, 3), leaky(1024, 512, 1))
            self.reduce5 = leaky(512, 256, 1)
            self.lateral4 = leaky(512, 256, 1)
            self.p4 = five_convs(512, 256)
            self.reduce4 = leaky(256, 128, 1)
            self.lateral3 = leaky(256, 128, 1)
            self.p3 = five_convs(256, 128)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")

        def forward(self, c3, c4, c5):
            p5 = self.post_spp(self.spp(self.pre_spp(c5)))
            p4 = self.p4(torch.cat([self.lateral4(c4), self.up(self.reduce5(p5))], 1))
            p3 = self.p3(torch.cat([self.lateral3(c3), self.up(self.reduce4(p4))], 1))
            return p3, p4, p5

    class Head(nn.Module):
        """PANet's bottom-up path with the three YOLO heads (strides 8, 16, 32): each head is a 3x3 leaky
        conv then a 1x1 conv with bias to 255 = 3 anchors x (4 box + 1 objectness + 80 classes) channels."""

        def __init__(self):
            super().__init__()
            self.head3 = nn.Sequential(leaky(128, 256, 3), nn.Conv2d(256, num_outputs, 1))
            self.down3 = leaky(128, 256, 3, 2)
            self.n4 = five_convs(512, 256)
            self.head4 = nn.Sequential(leaky(256, 512, 3), nn.Conv2d(512, num_outputs, 1))
            self.down4 = leaky(256, 512, 3, 2)
            self.n5 = five_convs(1024, 512)
            self.head5 = nn.Sequential(leaky(512, 1024, 3), nn.Conv2d(1024, num_outputs, 1))

        def forward(self, p3, p4, p5):
            out3 = self.head3(p3)
            n4 = self.n4(torch.cat([self.down3(p3), p4], 1))
            out4 = self.head4(n4)
            n5 = self.n5(torch.cat([self.down4(n4), p5], 1))
            out5 = self.head5(n5)
            return out3, out4, out5

    class YOLOv4(nn.Module):
        """YOLOv4 (Bochkovskiy et al. 2020): CSPDarknet53 + SPP + PANet + three YOLOv3 heads."""

        def __init__(self):
            super().__init__()
            self.backbone = CSPDarknet53()
            self.neck = Neck()
            self.head = Head()

        def forward(self, x):
            return self.head(*self.neck(*self.backbone(x)))

    return YOLOv4()


YOLOV4_SIZE = 256


@model("yolov4", "Korch",
       f"YOLOv4 (CSPDarknet53, Mish, SPP, PANet, 3 heads of 255 channels, no decoding), image 1x3x{YOLOV4_SIZE}x"
       f"{YOLOV4_SIZE} (Korch: 416; at 320 ONNX Runtime took 1.1-1.4 s at 2 threads on the 2-core machine, "
       "256 keeps it under ~1 s)")
def yolov4():
    return _yolov4(), [(1, 3, YOLOV4_SIZE, YOLOV4_SIZE)]


def _yolox(depth, width, num_classes=80):
    import torch
    from torch import nn

    class BaseConv(nn.Module):
        """YOLOX's conv block: Conv (no bias, 'same' padding, optional groups), BatchNorm, SiLU."""

        def __init__(self, cin, cout, kernel, stride=1, groups=1):
            super().__init__()
            self.conv = nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False)
            self.bn = nn.BatchNorm2d(cout, eps=1e-3, momentum=0.03)
            self.act = nn.SiLU()

        def forward(self, x):
            return self.act(self.bn(self.conv(x)))

    class DWConv(nn.Module):
        """Depthwise separable conv: depthwise BaseConv (groups = channels) then a pointwise 1x1 BaseConv."""

        def __init__(self, cin, cout, kernel, stride=1):
            super().__init__()
            self.dconv = BaseConv(cin, cin, kernel, stride, groups=cin)
            self.pconv = BaseConv(cin, cout, 1)

        def forward(self, x):
            return self.pconv(self.dconv(x))

    class Focus(nn.Module):
        """Space-to-depth stem: four strided slices (top-left, bottom-left, top-right, bottom-right),
        concatenated to 12 channels at half resolution, then a 3x3 BaseConv."""

        def __init__(self, cin, cout, kernel=3):
            super().__init__()
            self.conv = BaseConv(cin * 4, cout, kernel)

        def forward(self, x):
            tl = x[..., ::2, ::2]
            tr = x[..., ::2, 1::2]
            bl = x[..., 1::2, ::2]
            br = x[..., 1::2, 1::2]
            return self.conv(torch.cat([tl, bl, tr, br], 1))

    class Bottleneck(nn.Module):
        """1x1 BaseConv then a 3x3 depthwise-separable conv, plus the identity when shortcut is set."""

        def __init__(self, cin, cout, shortcut=True, expansion=0.5):
            super().__init__()
            hidden = int(cout * expansion)
            self.conv1 = BaseConv(cin, hidden, 1)
            self.conv2 = DWConv(hidden, cout, 3)
            self.use_add = shortcut and cin == cout

        def forward(self, x):
            y = self.conv2(self.conv1(x))
            return y + x if self.use_add else y

    class CSPLayer(nn.Module):
        """YOLOX's C3 block: two 1x1 branches of half width, n Bottlenecks on one, concat, 1x1 fuse."""

        def __init__(self, cin, cout, n=1, shortcut=True, expansion=0.5):
            super().__init__()
            hidden = int(cout * expansion)
            self.conv1 = BaseConv(cin, hidden, 1)
            self.conv2 = BaseConv(cin, hidden, 1)
            self.conv3 = BaseConv(2 * hidden, cout, 1)
            self.m = nn.Sequential(*[Bottleneck(hidden, hidden, shortcut, 1.0) for _ in range(n)])

        def forward(self, x):
            return self.conv3(torch.cat([self.m(self.conv1(x)), self.conv2(x)], 1))

    class SPPBottleneck(nn.Module):
        """SPP as in YOLOv3-SPP: 1x1 conv to half width, stride-1 max pools 5/9/13 concatenated with it, 1x1."""

        def __init__(self, cin, cout, kernels=(5, 9, 13)):
            super().__init__()
            hidden = cin // 2
            self.conv1 = BaseConv(cin, hidden, 1)
            self.pools = nn.ModuleList([nn.MaxPool2d(k, 1, k // 2) for k in kernels])
            self.conv2 = BaseConv(hidden * (len(kernels) + 1), cout, 1)

        def forward(self, x):
            x = self.conv1(x)
            return self.conv2(torch.cat([x] + [p(x) for p in self.pools], 1))

    class CSPDarknet(nn.Module):
        """YOLOX's backbone with depthwise convs: Focus stem, then four stages (stride-2 DWConv + CSPLayer
        with 1, 3, 3, 1 x depth Bottlenecks; SPP before the last); returns the dark3/4/5 features."""

        def __init__(self):
            super().__init__()
            base = int(64 * width)
            n = max(round(depth * 3), 1)
            self.stem = Focus(3, base, 3)
            self.dark2 = nn.Sequential(DWConv(base, base * 2, 3, 2), CSPLayer(base * 2, base * 2, n))
            self.dark3 = nn.Sequential(DWConv(base * 2, base * 4, 3, 2), CSPLayer(base * 4, base * 4, n * 3))
            self.dark4 = nn.Sequential(DWConv(base * 4, base * 8, 3, 2), CSPLayer(base * 8, base * 8, n * 3))
            self.dark5 = nn.Sequential(DWConv(base * 8, base * 16, 3, 2), SPPBottleneck(base * 16, base * 16),
                                       CSPLayer(base * 16, base * 16, n, shortcut=False))

        def forward(self, x):
            x = self.dark2(self.stem(x))
            d3 = self.dark3(x)
            d4 = self.dark4(d3)
            d5 = self.dark5(d4)
            return d3, d4, d5

    class PAFPN(nn.Module):
        """YOLOX's PAFPN: top-down (1x1 reduce, nearest 2x upsample, concat, CSPLayer) then bottom-up
        (stride-2 DWConv, concat, CSPLayer); outputs at strides 8, 16, 32."""

        def __init__(self):
            super().__init__()
            c3, c4, c5 = int(256 * width), int(512 * width), int(1024 * width)
            n = round(3 * depth)
            self.backbone = CSPDarknet()
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.lateral_conv0 = BaseConv(c5, c4, 1)
            self.C3_p4 = CSPLayer(2 * c4, c4, n, False)
            self.reduce_conv1 = BaseConv(c4, c3, 1)
            self.C3_p3 = CSPLayer(2 * c3, c3, n, False)
            self.bu_conv2 = DWConv(c3, c3, 3, 2)
            self.C3_n3 = CSPLayer(2 * c3, c4, n, False)
            self.bu_conv1 = DWConv(c4, c4, 3, 2)
            self.C3_n4 = CSPLayer(2 * c4, c5, n, False)

        def forward(self, x):
            x2, x1, x0 = self.backbone(x)
            fpn_out0 = self.lateral_conv0(x0)
            f_out0 = self.C3_p4(torch.cat([self.up(fpn_out0), x1], 1))
            fpn_out1 = self.reduce_conv1(f_out0)
            pan_out2 = self.C3_p3(torch.cat([self.up(fpn_out1), x2], 1))
            pan_out1 = self.C3_n3(torch.cat([self.bu_conv2(pan_out2), fpn_out1], 1))
            pan_out0 = self.C3_n4(torch.cat([self.bu_conv1(pan_out1), fpn_out0], 1))
            return pan_out2, pan_out1, pan_out0

    class YOLOXHead(nn.Module):
        """Decoupled head per level: 1x1 stem to 256*width channels, then a classification branch and a
        regression branch of two 3x3 DWConvs each; 1x1 predictions for classes, box (4) and objectness (1).
        Per level: concat(box, sigmoid(obj), sigmoid(cls)); levels flattened and concatenated (no decoding)."""

        def __init__(self):
            super().__init__()
            hidden = int(256 * width)
            self.stems = nn.ModuleList()
            self.cls_convs = nn.ModuleList()
            self.reg_convs = nn.ModuleList()
            self.cls_preds = nn.ModuleList()
            self.reg_preds = nn.ModuleList()
            self.obj_preds = nn.ModuleList()
            for c in (256, 512, 1024):
                self.stems.append(BaseConv(int(c * width), hidden, 1))
                self.cls_convs.append(nn.Sequential(DWConv(hidden, hidden, 3), DWConv(hidden, hidden, 3)))
                self.reg_convs.append(nn.Sequential(DWConv(hidden, hidden, 3), DWConv(hidden, hidden, 3)))
                self.cls_preds.append(nn.Conv2d(hidden, num_classes, 1))
                self.reg_preds.append(nn.Conv2d(hidden, 4, 1))
                self.obj_preds.append(nn.Conv2d(hidden, 1, 1))

        def forward(self, features):
            outputs = []
            for k, x in enumerate(features):
                x = self.stems[k](x)
                cls_feat = self.cls_convs[k](x)
                reg_feat = self.reg_convs[k](x)
                out = torch.cat([self.reg_preds[k](reg_feat), self.obj_preds[k](reg_feat).sigmoid(),
                                 self.cls_preds[k](cls_feat).sigmoid()], 1)
                outputs.append(out.flatten(start_dim=2))
            return torch.cat(outputs, 2).permute(0, 2, 1)

    class YOLOX(nn.Module):
        """YOLOX (Ge et al. 2021): CSPDarknet + PAFPN + decoupled anchor-free head."""

        def __init__(self):
            super().__init__()
            self.backbone = PAFPN()
            self.head = YOLOXHead()

        def forward(self, x):
            return self.head(self.backbone(x))

    return YOLOX()


@model("yolox_nano", "Korch",
       "YOLOX-Nano (Focus, depthwise CSPDarknet, width 0.25, depth 0.33, SiLU, PAFPN, decoupled head, "
       "no decoding; output 1x3549x85), image 1x3x416x416", quick=True)
def yolox_nano():
    return _yolox(0.33, 0.25), [(1, 3, 416, 416)]
