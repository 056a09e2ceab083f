"""``python -m app`` runs the thinkloop command."""

from app.cli import main

main()
