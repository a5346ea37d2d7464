"""Planning: instructions and LLM/VLM plans compiled into verified, recoverable trees.

See docs/planner.md.
"""
