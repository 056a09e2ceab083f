"""Teachers' reviews: a project's review queue, the decisions its teachers make, and the labelled
review set those decisions become (what a warrant measured on the deployment's own problems and
teachers rests on)."""
