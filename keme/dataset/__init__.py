"""The dataset directory: atomic JSONL files, a manifest of hashes, and readers with precise errors."""
