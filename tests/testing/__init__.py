"""What the tests share (pre-commit's testing/ is the model): fixtures and helpers that drive
fnrun, the engine and the runtimes; the tests themselves mirror the package's folders."""
