"""Tools are protocol objects: schema, safety flags, validation, permissions, call, rendering."""
