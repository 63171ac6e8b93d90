"""notebook: see ARCHITECTURE.md."""
