"""stack-trim (Zhu et al., HotNets'16): CPU energy of one-copy vs two-copy
and of TCP vs UDP at constant bit rates."""

from mobitrace.studies.registry import Chapter, Study, Thumbnail

STUDY = Study(
    slug="stack-trim",
    title="Trimming the Smartphone Network Stack",
    venue="Zhu et al., HotNets-XV, 2016",
    order=3,
    params_section="stack-trim",
    chapters=(Chapter("stack-trim", "Measured on a 2-core VM", per_device=True,
                      inputs=("data/interim/stack-trim",), shared_params=("power-models",)),),
    thumbnail=Thumbnail("stack-trim", "onecopy_vm-2core",
                        "CPU energy saving (%) and CPU power saving (mW) of one-copy over two-copy transmission "
                        "against the constant bit rate (Mbps)."),
    capture_kit="scripts/capture/stack_trim/run.py",
)
