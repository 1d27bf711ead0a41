"""transfer-tuning (Guner and Kosar): energy and throughput of HTTP
transfers against concurrency, parallelism and I/O request size."""

from mobitrace.studies.registry import Chapter, Study, Thumbnail

STUDY = Study(
    slug="transfer-tuning",
    title="Energy-Performance Trade-offs in Mobile Data Transfers",
    venue="Guner and Kosar, University at Buffalo (SUNY)",
    order=4,
    params_section="transfer-tuning",
    chapters=(Chapter("transfer-tuning", "Measured on an emulated 40 Mbit/s link", per_device=True,
                      inputs=("data/interim/transfer-tuning",), shared_params=("power-models",)),),
    thumbnail=Thumbnail("transfer-tuning", "fig2_vm-veth-40mbit-50ms",
                        "Throughput (Mbit/s) and energy per 100 MB (J) as each transfer knob (concurrency, "
                        "parallelism, I/O request size) is turned alone on the emulated link."),
    capture_kit="scripts/capture/transfer_tuning/run.py",
)
