"""The prior: initial persona and knowledge anchors, built before any event is planned."""
