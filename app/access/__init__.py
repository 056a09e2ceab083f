"""Who may do what, how often: signing in with an API key (`signin`) and the quotas checked before a
request's work (`quotas`), with the ledger of what each project spent per day (`usage`). Making
projects and keys is `app.projects`."""
