"""Background tasks: long work (background Bash, background agents) with an output file."""
