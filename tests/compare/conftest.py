"""The comparison tool's own tests: plain pytest, no guest.  The tool's
modules live in guest-tests/ (compare/, workloads/, scenarios/)."""
