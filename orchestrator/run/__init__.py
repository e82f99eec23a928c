"""Running functions over resources: the pipeline, the ResourceList on the wire, structured results."""
