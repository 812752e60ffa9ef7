"""Layer 7: platform policies from policies/*.yaml (filled in below)."""
