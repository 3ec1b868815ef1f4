"""The evaluation harness: replay trajectories through memory systems and score them."""
