"""priority-boost (Liang and Keshav): Welch tests of dynamic priority
boosting, from the published tables and re-run on a Linux host."""
