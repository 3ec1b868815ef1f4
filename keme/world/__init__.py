"""The simulated world below synthesis and QA: the typed catalog of what goes with what, the world state
a trajectory is said from, and the coherence checker that reads a dataset back without the generator."""
