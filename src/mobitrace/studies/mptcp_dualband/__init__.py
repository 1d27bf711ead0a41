"""mptcp-dualband (Khan et al., WiNTECH '21): throughput and energy per bit
of MPTCP over two emulated paths against the packet ratio."""
