"""ncq-fit: fits an ncq-disk model (.ncqm) to a drive's measurements.

The probe (tools/ncq-fit/probe-*.c, ncq-fit-probe) measures; these
modules read its samples, fit each parameter, write the model file and a
report.  docs/ncq-fit.md describes the method and the sample format.
"""
