"""Long-term memory: the experience store (SQLite truth, faiss index), retrieval,
consolidation and diagnosis."""
