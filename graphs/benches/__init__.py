"""Benches: the loop run on labelled sets (each version driven as a run is), and what came back
classified against the labels; the figures are computed by :mod:`graphs.analysis`."""
