"""suggest: see ARCHITECTURE.md."""
