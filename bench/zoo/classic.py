"""Common reference CNNs: ResNet-18 (also in OLLIE's evaluation) and MobileNetV2 (torchvision)."""
from . import model


@model("resnet18", "OLLIE", "ResNet-18 (torchvision), image 1x3x224x224", quick=True)
def resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None), [(1, 3, 224, 224)]


@model("mobilenet_v2", "common", "MobileNetV2 (torchvision), image 1x3x224x224", quick=True)
def mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None), [(1, 3, 224, 224)]


@model("regnet_x_400mf", "common", "RegNetX-400MF (torchvision; grouped 3x3 convs, group width 16), image 1x3x224x224")
def regnet_x_400mf():
    import torchvision
    return torchvision.models.regnet_x_400mf(weights=None), [(1, 3, 224, 224)]
