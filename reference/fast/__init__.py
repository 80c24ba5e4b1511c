"""Vectorized float64 backend: same signatures as the reference, validated against it by backend claims."""
