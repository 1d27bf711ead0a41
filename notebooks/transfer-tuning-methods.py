# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Transfer tuning: methods and the power model
#
# This page supplements {doc}`transfer-tuning`, where the findings and the claims are: the
# testbed and the scaled datasets, the power model that prices each run and the energy
# functions that integrate a power trace, modeled or measured.

# %% tags=["parameters"]
study = "transfer-tuning"

# %% tags=["remove-cell"]
from mobitrace.studies.transfer_tuning.chapter_methods import Chapter

ch = Chapter.from_parameters(globals()).setup()  # runs' energy

# %% [markdown]
# (transfer-tuning-testbed)=
# ## The testbed and the scaled datasets
#
# The reference capture is {glue:text}`ref_device` ({glue:text}`reps`
# repetitions per configuration; {glue:text}`n_runs` runs over all
# {glue:text}`n_devices` devices), made on a shared 2-core VM where every run
# held the machine's measurement lock ({glue:text}`lock_s:.0f` s of exclusive
# measurement time). Load outside the experiment (the capture's idle gate):
# {glue:text}`background_ref`. A run the gate flagged is left out of every
# summary, figure and claim ({glue:text}`n_left_out` in all); a capture made
# before the gate has no such record, and its runs are all kept. Each
# device's capture:

# %% tags=["hide-input"]
ch.captures()  # the run conditions of every device (tables/captures.csv)

# %% [markdown]
# Three network namespaces: nginx (Debian, one worker, keep-alive,
# `sendfile`) in one, the client in another, and in between a link shaped
# with `tc tbf` to {glue:text}`rate_mbit:.0f` Mbps. Achieved rates:
# {glue:text}`achieved_rate`.
#
# **Round-trip time without netem.** This kernel has no netem, so the RTT is
# emulated in user space: a delay bridge ({glue:text}`delay_bridge`) in a middle
# namespace reads every Ethernet frame from one veth (AF_PACKET) and writes it
# out of the other half the RTT later, in both directions, for an RTT of
# {glue:text}`rtt_ms:.0f` ms (offloads off so frames are at most one MTU).
# This emulates propagation delay, which is what makes TCP's window and slow
# start matter; it does not emulate jitter, reordering, random loss or the
# radio's MAC. The client's TCP receive buffer is capped at
# {glue:text}`rmem_size` (`tcp_rmem` in its namespace), a phone-sized
# window, so one stream is window-limited below the link rate, as on the
# paper's long paths ({glue:text}`p_rtt_sydney:.0f` ms to Sydney). The paper's paths were
# longer and ran over shared WiFi/LTE; ours is a shorter, clean path, so
# absolute numbers differ by design.
#
# The datasets are Table 2's html, image and video datasets, generated
# deterministically (seeded sizes uniform in Table 2's min-max range, seeded
# random content), scaled down so that the whole capture fits in about 20
# minutes of exclusive machine time:


# %% tags=["hide-input"]
ch.datasets()  # Table 2 beside the served datasets (tables/datasets.csv)

# %% [markdown]
# **CPU time.** The model prices the client's precise CPU time (getrusage of
# the client process). The kit also records `/proc/stat` (tick-sampled, all
# CPUs): it counts every process of the host, including the user-space delay
# bridge, which forwards every frame and is the busiest process of the
# testbed (it may also be what keeps the fastest runs somewhat below the link
# rate). Both are in each device's CPU table (on its page), the second for
# comparison only.

# %% [markdown]
# The html and image files keep Table 2's sizes; the video files are scaled
# down ({glue:text}`served_sizes_video` instead of
# {glue:text}`paper_sizes_video`); the file counts are cut
# ({glue:text}`files_html` of {glue:text}`paper_files_html`,
# {glue:text}`files_image` of {glue:text}`paper_files_image`,
# {glue:text}`files_video` of {glue:text}`paper_files_video`), so concurrency
# above the file count cannot add streams. With concurrency $c$ and
# parallelism $p$ the client holds $c \times p$ persistent connections; each
# file is split into $p$ byte ranges fetched with HTTP Range requests; the
# I/O size is the size of every `recv()` and of every write of the received
# data. Sweeps hold the other knobs at concurrency 1, parallelism 1 and
# {glue:text}`default_io_size`.
#
# (transfer-tuning-power-model)=
# ## Power: the model and the energy functions
#
# The power of the client "phone" is modeled at each 100 ms sample interval
# (as an averaging meter reports it) as the base power plus the CPU model
# applied to the client's measured CPU time (getrusage, precise) plus one
# radio at the interface's byte rate (rx + tx), drawing at most its active
# power whichever way the bytes go, as the source states it ("no more than
# 900mW"):

# %% tags=["hide-input"]
ch.power_model()  # tables/power_model.csv

# %% [markdown]
# With $r_{max}$ at {glue:text}`r_max:g` Mbps the radio draws its active power whenever data
# flows, so under this model the energy of a transfer is close to
# $P_{active} \times$ transfer time plus the CPU's share: faster transfers
# cost less energy per byte, and the energy saving of a knob is essentially
# its speed-up, $1 - 1/x$, plus what it changes in CPU time per byte. The
# model cannot show the paper's *break point* (Figure 9), where instantaneous
# power grows faster than the transfer time shrinks, except through CPU time.
# This is the main limit of the host re-run; a power log supplied with a
# capture replaces the model.
#
# The energy functions (`mobitrace.energy.integrals`, tested on hand-computable traces)
# are the same for a modeled and a measured trace: base power is the
# time-weighted mean over the idle window before the first request; $E_d$ is
# the trapezoidal integral of $P - P_b$ from the first request to the last
# byte (edges interpolated); energy per 100 MB is $E_d \cdot 10^8 / bytes$;
# the tail energy is $\int (P - P_b)\,dt$ from the last byte until power
# first falls to $P_b$ + {glue:text}`tail_tol_mw:.0f` mW.
#
# Power traces a user brings (`mobitrace.energy.power_traces`) are read in chunks
# (a 1 GB trace does not need the memory of the whole file) in three native
# formats, with units declared in the manifest: a power meter's
# `time,power` (WT210-like), a high-rate monitor's `time,current,voltage`
# (Monsoon-like) and the Android kit's `time,voltage_now,current_now`
# battery log (ns, uV, uA, with the observed sign of `current_now`).
# Duplicate or backward timestamps, gaps, negative power and charging
# current are errors naming the file, line and field; a missing sample
# (empty or NaN) is dropped and counted, and the gap check then applies.
