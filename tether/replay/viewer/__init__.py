"""The run viewer: a browser page that replays a trace, served locally or exported as one file."""
