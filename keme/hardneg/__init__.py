"""Adversarial hard negatives: shorter, harder trajectories around existing questions (`keme hardneg`)."""

from keme.hardneg.build import HardnegSettings, harden

__all__ = ["HardnegSettings", "harden"]
