"""Ports of KernelBench level-1 problems (PyTorch eager references timed on T4 ... B200): one module per kind."""
