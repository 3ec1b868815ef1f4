"""The command line's boundary: whatever goes wrong inside, the user gets a message, not a traceback."""

from __future__ import annotations

import pytest
from probe import refuses, works

pytestmark = pytest.mark.fault


def test_an_unknown_command_is_refused_with_usage():
    refuses(["keme", "frobnicate"], match="No such command")


def test_a_missing_dataset_is_named():
    refuses(["keme", "stats", "/nonexistent/dataset"], match="nonexistent")


def test_help_works():
    works(["keme", "--help"])
