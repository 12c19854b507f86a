"""Recurrent models: a bidirectional LSTM sequence tagger (speech/text models of the pre-transformer
era, and the recurrent layers still used in streaming ASR and OCR heads).

nn.LSTM exports as ONNX LSTM nodes (one per layer, both directions in one node); Orchid unrolls them
over the static sequence in fission.
"""
import torch
from torch import nn

from . import model


class LstmTagger(nn.Module):
    """2-layer bidirectional LSTM over a feature sequence, then a per-step Linear classifier."""

    def __init__(self, features=128, hidden=256, layers=2, classes=64):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=layers, bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


@model("lstm_tagger", "common", "2-layer bidirectional LSTM (hidden 256) over 64 steps of 128 features, "
       "per-step Linear to 64 classes, 1x64x128")
def lstm_tagger():
    return LstmTagger(), [(1, 64, 128)]
