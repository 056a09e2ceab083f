"""Labelled validity sets: the flaw taxonomy, the item format, and adversarial twins."""
