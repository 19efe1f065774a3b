"""The embedded demo: a procedurally generated task, a tiny model and a character tokenizer."""
