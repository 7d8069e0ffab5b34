"""Ports of KernelBench level-1 problems timed with PyTorch eager on T4 to B200: modules by kind of operation."""
