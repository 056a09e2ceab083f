"""The offline panel: deterministic checks that judge a problem without a model."""
