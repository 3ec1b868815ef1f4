"""KEME trajectory synthesis: planner, grounder, realizer, reviser and the pipeline that drives them."""
