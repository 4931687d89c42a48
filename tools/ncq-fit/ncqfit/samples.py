"""The probe's samples: JSON lines, one record per line, each with a
"type" (docs/ncq-fit.md#the-sample-format)."""

import gzip
import json
from collections import defaultdict


class SampleError(Exception):
    """A sample file that cannot be fitted; the message says why."""


class Samples:
    """Records of one probe run, grouped by type."""

    def __init__(self, records):
        self.by_type = defaultdict(list)
        for r in records:
            self.by_type[r.get("type")].append(r)
        if not self.by_type.get("capacity"):
            raise SampleError("no capacity record: not the output of "
                              "ncq-fit-probe, or the probe stopped at once")

    def __getitem__(self, kind):
        return self.by_type.get(kind, [])

    @property
    def capacity(self):
        return int(self["capacity"][0]["sectors"])

    @property
    def identify(self):
        ids = self["identify"]
        return ids[0] if ids else None

    def skipped(self):
        return [(r["what"], r["why"]) for r in self["skipped"]]


def load(path):
    records = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                # a probe killed mid-line leaves a partial last line
                raise SampleError(f"{path}:{n}: not a JSON record ({e.msg}); "
                                  "give the probe's complete output") from None
    return Samples(records)
