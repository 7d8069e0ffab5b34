"""GPU models: scaling surfaces and power, taxonomy, CRISP and DVFS, the SIMT timing model."""
