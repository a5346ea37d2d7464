"""One episode: the opened scene, the compiled tree, its observers, memory and result files."""
