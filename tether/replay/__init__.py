"""Replay: the trace recorder, the trace format, the browser viewer and its exports."""
