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
# # Trimming the network stack (stack-trim)
#
# Zhu et al. (HotNets'16) price the CPU activity of Android phones with a
# componentized power model and find that the CPU dominates networking energy
# at high rates. They estimate what two ways of trimming the stack save:
# **one-copy** data moves (`sendfile()` and `splice()` instead of
# `read()`+`send()` and `recv()`+`write()`, §4) and **offloading TCP** to the
# access point (§5), over WiFi and over the loopback interface to emulate
# faster links. On loopback they also compare TCP with UDP and find that UDP
# with 1.5 kB datagrams costs *more* CPU energy than TCP from {glue:text}`p_cross:g` Mbps up,
# unless the MTU and the datagrams are raised to 20 kB.
#
# This chapter repeats the one-copy and the TCP-vs-UDP experiments on a Linux
# host with the capture kit `scripts/capture/stack_trim/`: constant-bit-rate
# streams from 1 Mbps to beyond what the host sustains, over loopback and over
# a veth pair, uplink (the device sends a file) and downlink (the device
# stores what it receives), with the precise CPU time of each process. TCP
# offload needs a cooperating access point and a raw-socket stack; it is not
# re-run here (its claims are listed as not checkable).
#
# ```{admonition} Provenance
# **measured**: CPU time, bytes and rates from the raw captures in
# `data/raw/stack-trim/<device>/` (manifest and content hash below).
# **modeled**: every energy and power: the measured CPU time priced with the
# CPU power model named below (its coefficients are *assumed*, not fitted).
# **published**: the paper's numbers (`data/published/stack-trim.yaml`).
# ```

# %% tags=["parameters"]
study = "stack-trim"

# %% tags=["remove-cell"]
from mobitrace.studies.stack_trim.chapter import Chapter

ch = Chapter.from_parameters(globals())
# %% [markdown]
# How the captures were made, their run conditions and the CPU power model that
# prices their CPU time are on the {doc}`methods page <stack-trim-methods>`.

# %% tags=["remove-cell"]
ch.captures()
ch.power_model()
# %% [markdown]
# (stack-trim-onecopy)=
# ## One-copy vs two-copy (Figure 3 analogs)
#
# For each link, direction and rate: the normalized CPU energy saving
# $1 - E(\text{one-copy})/E(\text{two-copy})$ and the absolute CPU power saving
# $P(\text{two-copy}) - P(\text{one-copy})$, from the CPU time of **both
# endpoints** (on loopback the whole stack runs on the one host, as on the
# paper's phone measured with a power meter), as the ratio of the mean over
# the repetitions, with a {glue:text}`ci_pct:.0f`% percentile bootstrap
# interval ({glue:text}`n_boot` resamples of the repetitions of each
# condition). Crosses: a rate the host did not sustain (some run
# delivered less than {glue:text}`min_deliv_pct:.0f`% of it). The table also
# gives the saving for the device-side process alone.

# %% tags=["hide-input"]
ch.onecopy_section()
# %% tags=["remove-cell"]
ch.onecopy_summary()
# %% [markdown]
# Of the {glue:text}`oc_n_points` sustained (link, direction, rate) points,
# the interval of the saving contains zero at {glue:text}`oc_n_zero_in`,
# lies above zero at {glue:text}`oc_n_pos` and below zero at
# {glue:text}`oc_n_neg`; the median saving is
# {glue:text}`oc_median_saving:.1f`% and the median coefficient of variation
# of a condition's energy over its repetitions {glue:text}`oc_cv_median:.0f`%.
# {glue:text}`oc_verdict_text` {glue:text}`oc_seq_text` {glue:text}`oc_reading_text`

# %% [markdown]
# (stack-trim-transport)=
# ## TCP vs UDP (Figure 5 c/d analogs)
#
# Uplink, the device sends a file with `read()`+`send()`: TCP (16.4 kB writes,
# MTU 1500), UDP with 1472-byte datagrams (MTU 1500) and UDP with 20000-byte
# datagrams on a link with its MTU raised to 21000. The figure shows the
# CPU energy ratio of each UDP variant to TCP, $E(\text{UDP})/E(\text{TCP})$
# (above 1: UDP costs more), with the same bootstrap intervals; the table
# also gives the absolute power saving. The *crossover* is
# the lowest rate from which UDP costs more than TCP at every higher rate.

# %% tags=["hide-input"]
ch.transport_section()
# %% [markdown]
# {glue:text}`cross_text` At the lowest rate, {glue:text}`udp1_min_rate:g`
# Mbps, UDP with 1472-byte datagrams costs {glue:text}`udp1_ratio_lowest:.1f`
# times TCP's CPU energy. The mechanism is the one the paper names: the
# sender makes
# {glue:text}`calls_udp1:.0f` system calls per MB with 1472-byte datagrams,
# {glue:text}`calls_udp20:.0f` with 20000-byte datagrams and
# {glue:text}`calls_tcp:.0f` with TCP's 16.4 kB writes (medians over the
# runs), and each datagram goes through layers 4 to 2 on its own, while TCP
# batches (segmentation offload on loopback and veth).

# %% [markdown]
# (stack-trim-breakdown)=
# ## CPU-time breakdown (a Table 1 analog)
#
# The paper splits the phone's CPU utilization during WiFi streaming into
# logging, OS processes, the WiFi driver and the network stack (per-process
# logging). Here, for TCP two-copy uplink: the endpoints' user time
# (application), the endpoints' kernel time (system calls, copies and the
# protocol stack run in process context) from `getrusage`, and from
# tick-sampled `/proc/stat` of the whole host the softirq time and all busy
# time; "other" is the host's busy time not charged to the endpoints
# (logging, the OS, and the other tenants of the shared VM). All in % of one
# core. There is no WiFi driver; the paper's table is printed below it.

# %% tags=["hide-input"]
ch.breakdown()
# %% [markdown]
# (stack-trim-numbers)=
# ## Key numbers
#
# On {glue:text}`ref_device`, over loopback, the best one-copy point
# {glue:text}`oc_lo_max_phrase` the CPU energy of two-copy (interval
# {glue:text}`oc_lo_max_lo:.1f` to {glue:text}`oc_lo_max_hi:.1f`%, at
# {glue:text}`oc_lo_max_rate:g` Mbps, {glue:text}`oc_lo_max_dir`link); the
# paper reports up to {glue:text}`p_oc_max:g`%. At WiFi-like rates (at most
# {glue:text}`wifi_max:g` Mbps) over the veth pair the largest saving was
# {glue:text}`oc_wifi_max:.1f`% (paper: below {glue:text}`p_oc_wifi:g`%).
# The modeled power saving on loopback uplink was
# {glue:text}`oc_p100:.0f` mW at 100 Mbps and {glue:text}`oc_p240:.0f` mW at
# 240 Mbps (paper: {glue:text}`p_p100:g` and {glue:text}`p_p240:g` mW; ours
# scale with the assumed coefficients). {glue:text}`cross_text` At
# {glue:text}`udp_top_rate:g` Mbps, the highest rate both UDP variants
# sustained on loopback, UDP costs {glue:text}`udp20_ratio_top:.2f` times
# TCP's CPU energy with 20000-byte datagrams (interval
# {glue:text}`udp20_ratio_top_lo:.2f` to {glue:text}`udp20_ratio_top_hi:.2f`)
# against {glue:text}`udp1_ratio_top:.2f` with 1472-byte datagrams (interval
# {glue:text}`udp1_ratio_top_lo:.2f` to {glue:text}`udp1_ratio_top_hi:.2f`).

# %% tags=["remove-cell"]
ch.key_numbers()
# %% [markdown]
# (stack-trim-published)=
# ## The paper's stated values
#
# Every number the chapter compares with, as printed (with its location).

# %% tags=["hide-input"]
ch.published()
# %% [markdown]
# (stack-trim-claims)=
# ## Claims
#
# Each claim of the paper that this chapter addresses, the paper's value, the
# artifact's value and a verdict. "About x" is reproduced within
# ±{glue:text}`tol_pct:.0f`% of x; bounds must hold as stated. Claims about TCP
# offload, WiFi radios and the phones' logging breakdown cannot be checked
# here (no offloading AP, no radio, no phone).

# %% tags=["hide-input"]
ch.claims_section()
# %% tags=["remove-cell"]
ch.findings()
# %% tags=["remove-cell"]
ch.metrics()
# %% [markdown]
# {glue:text}`claims_tally` The run-to-run spread is *testbed-bound*: a shared
# VM was not built to reach the paper's 2.5%. {glue:text}`robustness_text`
