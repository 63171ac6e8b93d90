"""worker: see ARCHITECTURE.md."""
