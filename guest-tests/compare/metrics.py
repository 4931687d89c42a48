"""A cell's metrics: from the device trace (drive latency, delay count,
forced time-outs; docs/trace-schema.md) and from fio (per-job throughput
and latency, every measured read's completion latency from fio's
per-I/O logs).  The statistics helpers are the scenarios' own."""

import re

import scenarios as sc

PERCENTILES = (50, 95, 99, 99.9)
CDF_POINTS = 101
# The scalar metrics a baseline comparison looks at, as flat names, with
# their meaning (the report's row labels).
COMPARED = {
    "iops": "throughput, IOPS (all jobs)",
    "mbs": "throughput, MB/s (all jobs)",
    "lat_ms.p50": "latency p50 ms (measured jobs)",
    "lat_ms.p95": "latency p95 ms",
    "lat_ms.p99": "latency p99 ms",
    "lat_ms.p99.9": "latency p99.9 ms",
    "lat_ms.max": "latency max ms",
    "worst_ms": "worst case ms (any job)",
    "drive_ms.p50": "drive latency p50 ms (trace)",
    "drive_ms.p99": "drive latency p99 ms",
    "drive_ms.max": "drive latency max ms",
    "delay_max": "delay count max",
    "delay_p99": "delay count p99",
    "timeouts": "forced time-outs",
    "libata_errors": "libata failed commands (dmesg)",
    "fairness": "fairness (Jain, jobs' IOPS)",
}
_LOG = re.compile(r"lat-(.+)_clat\.(\d+)\.log\Z")


def _r(x, nd=3):
    return round(x, nd) if x == x else None          # NaN -> null


def pct_block(values):
    """{"p50", "p95", "p99", "p99.9", "max"} of a series; {} if empty."""
    if not values:
        return {}
    out = {f"p{p:g}": _r(sc.percentile(values, p)) for p in PERCENTILES}
    out["max"] = _r(max(values))
    return out


def lat_logs(files):
    """{"<job>.<n>": [completion latency ms]} from fio's per-I/O logs
    (lat-<job>_clat.<n>.log: time ms, latency ns, direction, size, ...)."""
    out = {}
    for name in sorted(files):
        m = _LOG.match(name)
        if not m:
            continue
        data = files[name]
        if isinstance(data, bytes):
            data = data.decode()
        out[f"{m.group(1)}.{m.group(2)}"] = [
            int(line.split(",")[1]) / 1e6
            for line in data.splitlines() if line.strip()]
    return out


def _job(j):
    """One fio job's figures: reads, writes and trims together."""
    dirs = [j[d] for d in ("read", "write", "trim")
            if d in j and j[d].get("total_ios")]
    iops = sum(d["iops"] for d in dirs)
    mbs = sum(d["bw"] for d in dirs) * 1024 / 1e6          # bw: KiB/s
    out = {"iops": _r(iops), "mbs": _r(mbs),
           "ios": sum(d["total_ios"] for d in dirs)}
    if dirs:
        main = max(dirs, key=lambda d: d["total_ios"])
        cl = main["clat_ns"]
        pc = cl.get("percentile", {})
        out["p50_ms"] = _r(pc.get("50.000000", 0) / 1e6)
        out["p99_ms"] = _r(pc.get("99.000000", 0) / 1e6)
        out["max_ms"] = _r(max(d["clat_ns"]["max"] for d in dirs) / 1e6)
    return out


def fio_jobs(fio):
    """{name: figures} per fio job; clones of one job (numjobs) are
    name.1, name.2, ... (fio reports them separately)."""
    jobs = [j for j in fio.get("jobs", []) if j.get("jobname") != "marker"]
    count = {}
    for j in jobs:
        count[j["jobname"]] = count.get(j["jobname"], 0) + 1
    seen, out = {}, {}
    for j in jobs:
        n = j["jobname"]
        seen[n] = seen.get(n, 0) + 1
        out[n if count[n] == 1 else f"{n}.{seen[n]}"] = _job(j)
    return out


def cdf_points(values):
    """CDF_POINTS quantiles (0 %, 1 %, ..., 100 %) of a series, each an
    observed value (no interpolation, so that a short series keeps its
    steps): enough to draw its CDF from results.json alone."""
    if not values:
        return []
    v = sorted(values)
    n = len(v)
    return [_r(v[(n - 1) * i // (CDF_POINTS - 1)])
            for i in range(CDF_POINTS)]


def guest_seconds(records, marker):
    """Guest time of the workload: from the marker read's arrival to the
    last completion."""
    start = min((r["arrival_ns"] for r in records
                 if r["lba"] == marker and r["sectors"] == 1), default=0)
    end = max((r["complete_ns"] for r in records), default=0)
    return round((end - start) / 1e9, 3)


def cell_metrics(records, fio, logs, marker):
    """All metrics of one cell.  records: the device trace; only commands
    that arrived after the marker read count.  fio: fio's JSON or None;
    logs: lat_logs()."""
    recs = sc.split_by_markers(records, [marker])[marker]
    media = [r for r in recs if r["op"] in ("R", "W")]
    drive = [sc.latency_ms(r) for r in media]
    delays = [r["delay_count"] for r in media]
    jobs = fio_jobs(fio) if fio else {}
    host = [x for k in sorted(logs) for x in logs[k]]
    if jobs:
        iops = sum(j["iops"] for j in jobs.values())
        mbs = sum(j["mbs"] for j in jobs.values())
    else:
        span = (max(r["complete_ns"] for r in media) -
                min(r["arrival_ns"] for r in media)) / 1e9 if media else 0
        iops = len(media) / span if span else 0.0
        mbs = sum(r["sectors"] for r in media) * 512 / 1e6 / span \
            if span else 0.0
    rates = [j["iops"] for j in jobs.values()]
    return {
        "iops": _r(iops), "mbs": _r(mbs),
        "lat_ms": pct_block(host),
        "worst_ms": _r(max((j.get("max_ms", 0) for j in jobs.values()),
                           default=max(drive, default=0))),
        "drive_ms": pct_block(drive),
        "delay_max": max(delays, default=0),
        "delay_p99": _r(sc.percentile(delays, 99)) if delays else 0,
        "delay_hist": sc.histogram(delays),
        "timeouts": sum(r["reason"] == "timeout" for r in recs),
        "fairness": _r(sc.jain(rates), 4) if len(rates) > 1 else 1.0,
        "commands": len(media),
        "jobs": jobs,
        "lat_cdf_ms": cdf_points(host or drive),
        "lat_source": "fio" if host else "trace",
    }


def libata_health(dmesg):
    """What the guest's libata said went wrong: failed commands, and
    whether it turned NCQ off (then the cell measured no queueing)."""
    return {"libata_errors": dmesg.count("failed command:"),
            "ncq_disabled": "NCQ disabled" in dmesg}


def flat(m):
    """{name: value} of the COMPARED metrics present in a metrics dict."""
    out = {}
    for name in COMPARED:
        if "." in name and name.split(".", 1)[0] in ("lat_ms", "drive_ms"):
            top, sub = name.split(".", 1)
            v = m.get(top, {}).get(sub)
        else:
            v = m.get(name)
        if v is not None:
            out[name] = v
    return out
