"""mobitrace: re-derive the figures and tables of five studies of mobile
network-stack CPU and energy cost from raw traces and published numbers."""

__version__ = "0.1.0"
