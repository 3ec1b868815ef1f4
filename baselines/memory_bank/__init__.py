"""Memory Bank: the reference BM25 three-layer memory (semantic / episodic / working).

Implements `../shared/seeds/memory-bank-user-guide.txt` exactly where it is
specific; each module states where it had to choose.
"""
