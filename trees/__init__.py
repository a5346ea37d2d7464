"""The executive: the YAML tree language, its validator and compiler, the tick loop and the CLI."""
