"""Long-term memory: the experience store (SQLite truth, faiss index), retrieval, consolidation, diagnosis."""
