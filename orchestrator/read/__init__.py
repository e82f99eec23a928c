"""Reading a package: every YAML resource under a directory, minus what `.krmignore` leaves out."""
