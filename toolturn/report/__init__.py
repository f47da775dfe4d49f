"""What a run folder shows people: figures and an HTML page (``writer``), and the comparison of
two runs (``compare``). Importing this package loads no plotting library."""
