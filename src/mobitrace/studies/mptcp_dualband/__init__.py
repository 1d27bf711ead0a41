"""mptcp-dualband (Khan et al., WiNTECH '21): throughput and energy per bit
of MPTCP over two emulated paths against the packet ratio."""

from mobitrace.studies.registry import Chapter, Study, Thumbnail

STUDY = Study(
    slug="mptcp-dualband",
    title="Multipath TCP in Smartphones Equipped with Millimeter Wave Radios",
    venue="Khan et al., WiNTECH '21",
    order=5,
    params_section="mptcp-dualband",
    chapters=(Chapter("mptcp-dualband", "Measured on two emulated paths", per_device=True,
                      inputs=("data/interim/mptcp-dualband",), shared_params=("power-models",)),),
    thumbnail=Thumbnail("mptcp-dualband", "fig1_mptcp_throughput",
                        "Bars of backlogged throughput (Mbps) per direction for each path and for MPTCP in total, "
                        "with the sum of the two path rates marked."),
    capture_kit="scripts/capture/mptcp_dualband/run.py",
)
