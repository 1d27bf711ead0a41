"""Code shared by every study (capture reading first)."""
