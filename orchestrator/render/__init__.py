"""`fnrun render`: kpt packages (Kptfile pipelines) through fnrun's runtimes and write-back."""
