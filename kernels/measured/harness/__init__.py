"""The measured-corpus harness: the ports of :mod:`kernels.measured` traced at their measured points
(:mod:`.points`), the measured times and counts of the data they come from (:mod:`.sources`), the work Portcast
sees against the data's counts (:mod:`.faithfulness`), the SIMT model's times beside the measured ones
(:mod:`.correlation`) and the ports' single-thread CPU times (:mod:`.cpu_times`). ``portcast measured`` runs them
(docs/measured.md). The port registry (:mod:`kernels.measured.registry`) does not look in here.
"""
