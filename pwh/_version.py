"""The package version: a leaf every layer may import (the gate, the packet and the CLI print it)."""

__version__ = "0.1.0"
