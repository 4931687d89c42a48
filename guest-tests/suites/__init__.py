"""The suite runners' Python, one module a runner (scripts/run-*.sh run
`python3 -m suites.NAME` through scripts/lib/suite.sh): what the guest
runs, and how its output becomes verdicts and a summary.  The parsing is
in plain functions that tests/repo/test_suites.py feeds with the suites'
own output, without a guest.

  blktests      scripts/run-blktests.sh
  cdl_tools     scripts/run-cdl-tools.sh
  zonefs        scripts/run-zonefs-tests.sh
  conformance   scripts/run-conformance.sh
  command       scripts/run-in-guest.sh: any command line, no verdicts
"""
