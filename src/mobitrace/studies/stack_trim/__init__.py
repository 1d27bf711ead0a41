"""stack-trim (Zhu et al., HotNets'16): CPU energy of one-copy vs two-copy
and of TCP vs UDP at constant bit rates."""
