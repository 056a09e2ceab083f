"""The browser viewer: one page at ``/`` and its static files, reading the public /v1 API only."""
