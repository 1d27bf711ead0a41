"""cpu-gbps (Aggarwal et al., MobiCom '19 poster): CPU utilization against
TCP throughput, from the paper's numbers and measured on Linux hosts."""

from mobitrace.studies.registry import Chapter, Study, Thumbnail

STUDY = Study(
    slug="cpu-gbps",
    title="Can Mobile Hardware Keep Up with Today's Gigabit Wireless Technologies?",
    venue="Aggarwal et al., MobiCom '19 (poster)",
    order=1,
    params_section="cpu-gbps-measured",
    chapters=(
        Chapter("cpu-gbps", "The paper's numbers"),
        Chapter("cpu-gbps-measured", "Measured on our hosts", per_device=True,
                inputs=("data/interim/cpu-gbps", "data/results/cpu-gbps-devices", "data/results/cpu-gbps/tables")),
    ),
    thumbnail=Thumbnail("cpu-gbps-measured", "comparison",
                        "Total CPU utilization (%) against TCP downlink throughput (Gbps): the lines fitted to the "
                        "measured hosts next to the lines implied by the paper's two phones."),
    capture_kit="scripts/capture/capture.py",
    device_analysis_params=("alpha", "target_rates_gbps", "cpu_threshold_pct"),
)
