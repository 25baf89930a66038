"""Node functions (one module each) and the pure routing functions."""
