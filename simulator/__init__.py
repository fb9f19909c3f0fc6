"""Deterministic simulator of the admission pipeline (beekeeper simulate)."""
