"""Kernel corpus: CPU regions with their GPU ports and input generators."""
