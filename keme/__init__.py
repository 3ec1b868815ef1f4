"""KEME: knowledge-guided synthesis of year-long mobile-assistant trajectories."""

__version__ = "0.1.0"
SCHEMA_VERSION = "1.0"
