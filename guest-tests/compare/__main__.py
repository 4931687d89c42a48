"""`python3 -m compare`: the comparison tool's command line (compare/cli.py;
scripts/compare.py runs it with the checkout's package roots)."""
import sys

from compare.cli import main

sys.exit(main())
