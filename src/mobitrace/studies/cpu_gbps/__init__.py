"""cpu-gbps (Aggarwal et al., MobiCom '19 poster): CPU utilization against
TCP throughput, from the paper's numbers and measured on Linux hosts."""
