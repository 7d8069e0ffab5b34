"""Ports of the kernels other groups timed on real GPUs (see ``docs/measured.md``).

Each module defines ``KERNELS = [MeasuredKernel(...), ...]``, one entry per measured GPU kernel;
:func:`kernels.measured.registry.all_measured` collects them.
"""
