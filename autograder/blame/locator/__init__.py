"""locator: see ARCHITECTURE.md."""
