"""``python -m kubectl_dra`` runs the plugin."""

from .cli.main import main

main()
