"""The shared core: one of each thing every study needs (the safe capture reader first)."""
