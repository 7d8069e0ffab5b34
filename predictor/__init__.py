"""Predictor: the XAPP interaction regressor, baselines, Eiger, metrics and shipped models."""
