"""The per-episode blackboard: key layout, command slot, event log and text templates over it."""
