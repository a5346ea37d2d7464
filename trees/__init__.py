"""The tree language: values, node registry, validator and compiler, rendering, the tick loop
and the library of trees."""
