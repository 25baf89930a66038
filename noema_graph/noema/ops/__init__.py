"""Domain operations, one module per area; each is a sans-IO generator over the store."""
