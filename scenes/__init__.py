"""The world: LIBERO tasks on robosuite/MuJoCo, the `Robot` interface behaviours talk to,
goal predicates and object aliases. Knows nothing of trees, policies or memory."""
