"""The `tether` command: one module per verb group, one error boundary (`tether.cli.main`)."""
