"""Planning: instructions and LLM/VLM plans compiled into verified, recoverable trees (docs/planner.md)."""
