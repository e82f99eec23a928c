"""Runtimes that run a function on this machine without an engine: a local executable
(`--enable-exec`) and fnrun's or kpt's catalog code in a child of the fork server (`zygote`),
with the confinement that stands in for a container."""
