"""Adapters to learned models behind small protocols (policies, planners, perception, embedders)."""
