"""py_trees leaves and decorators: analytic primitives, checks, sim-time decorators."""
