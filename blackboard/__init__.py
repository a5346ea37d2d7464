"""Memory: the per-episode blackboard layout and the command slot."""
