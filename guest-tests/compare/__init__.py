"""The comparison tool behind scripts/compare.py (docs/compare.md): a
matrix of kernels x schedulers x device lines x workloads, one guest run
per cell, metrics from the device trace and fio, a side-by-side report,
results.json, junit.xml, and a comparison with a saved baseline.

  matrix.py    the matrix file: parsing, checking, cells, shards
  kernels.py   kernel names and image directories
  cell.py      one cell: the guest script, the run, its raw results
  metrics.py   a cell's metrics from its trace and fio output
  baseline.py  a run against a saved results.json
  report.py    report.md and its plots
  junit.py     junit.xml
  cli.py       the command line
"""
