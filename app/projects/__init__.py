"""Projects (tenants) and their API keys: the admin API, and the keys every request signs in with."""
