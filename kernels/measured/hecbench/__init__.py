"""Ports of HeCBench CUDA programs timed on an RTX 3080 (gpuFLOPBench): one module per program."""
