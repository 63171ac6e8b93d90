"""fix: see ARCHITECTURE.md."""
