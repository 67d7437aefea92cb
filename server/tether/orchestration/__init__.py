"""Running the model's tool calls: the per-call pipeline, batching and streaming execution."""
