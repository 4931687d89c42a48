"""Synthetic device traces, fio output and results for the tests."""
import copy

MARKER = 1000001


def rec(lba, arrival_ms, complete_ms, delay=0, reason="policy", op="R",
        sectors=8):
    return {"tag": 0, "op": op, "lba": lba, "sectors": sectors, "fua": 0,
            "prio": 0, "arrival_ns": int(arrival_ms * 1e6),
            "dispatch_ns": int(arrival_ms * 1e6),
            "complete_ns": int(complete_ms * 1e6), "seek_ns": 0,
            "rotate_ns": 0, "transfer_ns": 0, "cache": "miss",
            "queue_len": 0, "delay_count": delay, "reason": reason}


def trace():
    """A boot read, the marker, then ten reads of 1..10 ms, one of them a
    forced time-out overtaken by 7 others."""
    out = [rec(0, 0, 500), rec(MARKER, 1000, 1001, sectors=1)]
    for i in range(10):
        out.append(rec(100 + 8 * i, 1002 + i, 1002 + 2 * i + 1,
                       delay=7 if i == 9 else i % 2,
                       reason="timeout" if i == 9 else "policy"))
    return out


def fio_job(name, iops, bw, ios, p50_ns, p99_ns, max_ns):
    return {"jobname": name, "read": {
        "iops": iops, "bw": bw, "total_ios": ios,
        "clat_ns": {"max": max_ns, "percentile": {
            "50.000000": p50_ns, "99.000000": p99_ns}}},
        "write": {"iops": 0, "bw": 0, "total_ios": 0,
                  "clat_ns": {"max": 0}}}


def fio():
    return {"jobs": [fio_job("near", 30.0, 120, 300, 5e6, 9e6, 10e6),
                     fio_job("near", 30.0, 120, 300, 5e6, 9e6, 11e6),
                     fio_job("far", 10.0, 40, 100, 2e9, 2e9, 2.5e9)]}


def cell(index, coord, scheduler="none", metrics=None, status="ok",
         image="img1", workload="w"):
    c = {"id": f"6.1 | {scheduler} | model=x | {workload}",
         "index": index, "coord": list(coord), "kernel": "6.1",
         "scheduler": scheduler, "device": "ncq-disk,model=x",
         "device_label": "model=x", "workload": workload,
         "dir": f"cells/c{index:03d}", "status": status,
         "inputs": {"image": {"inputs_hash": image},
                    "workload_metric": "m", "workload_params": {},
                    "workload_sha256": "ab" * 32},
         "wall_s": 20.0, "guest_s": 5.0}
    if status == "ok":
        c["metrics"] = copy.deepcopy(metrics or base_metrics())
    else:
        c["error"] = "scheduler cfq is not available in kernel 6.1.0-56"
    return c


def base_metrics():
    return {"iops": 100.0, "mbs": 0.4,
            "lat_ms": {"p50": 10.0, "p95": 20.0, "p99": 30.0,
                       "p99.9": 40.0, "max": 50.0},
            "worst_ms": 50.0,
            "drive_ms": {"p50": 9.0, "p95": 19.0, "p99": 29.0,
                         "p99.9": 39.0, "max": 49.0},
            "delay_max": 10, "delay_p99": 9.0, "delay_hist": {"0": 5,
                                                             "10": 1},
            "timeouts": 0, "fairness": 1.0, "commands": 6,
            "jobs": {"reader": {"iops": 100.0, "mbs": 0.4, "ios": 6,
                                "max_ms": 50.0}},
            "lat_cdf_ms": [1.0, 2.0, 50.0], "lat_source": "fio"}


def results(cells, qemu="q1", matrix_sha="m1", total=None):
    return {"format": "ncq-compare-results 1",
            "matrix": {"name": "t", "file": "t.toml", "sha256": matrix_sha,
                       "cells": total if total is not None else len(cells),
                       "workloads": ["w"]},
            "shard": None, "qemu": {"build": "/b", "sha256": qemu},
            "cells": cells}
