"""Language resources (pools, persona phrasing, dialogue patterns, anchor content) and the template engine."""
