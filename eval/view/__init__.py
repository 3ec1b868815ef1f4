"""`keme view`: a static site of a dataset and its runs (data shapes it, site writes it)."""
