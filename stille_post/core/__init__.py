"""The bottom layer: events and visibility, transcripts, rng, errors, roster."""
