"""`fnrun render`: kpt packages (Kptfile pipelines) run through fnrun's own read → run → write."""
