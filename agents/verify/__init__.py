"""Deterministic verification of what a stated solution computes (exact rational arithmetic)."""
