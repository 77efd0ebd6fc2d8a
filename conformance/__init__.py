"""The pluggable conformance suite for Delta checkpoint writers and readers."""
