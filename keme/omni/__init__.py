"""MobileMem-Omni: app screenshots rendered from HTML templates, attached to sessions as visual memory
points."""
