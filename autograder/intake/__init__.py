"""intake: see ARCHITECTURE.md."""
