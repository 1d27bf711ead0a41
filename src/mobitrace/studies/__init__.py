"""The studies: one folder each (description in __init__.py, ingest,
analysis, schema). mobitrace.studies.registry finds them."""
