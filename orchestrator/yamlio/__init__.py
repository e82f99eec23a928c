"""YAML in two speeds: libyaml (`fast`) for reading, sending and comparing everything, ruamel
round-trip (`roundtrip`) only for documents that really changed, and plain text operations
(`text`) that keep bytes the user wrote."""
