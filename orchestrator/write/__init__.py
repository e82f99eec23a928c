"""Writing results back: minimal text edits per file, staged, journalled and committed all together."""
