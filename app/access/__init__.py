"""Who may do what, how often: signing in with an API key (`signin`) and the quotas checked before a
request's work (`quotas`). Making projects and keys is `app.projects`."""
