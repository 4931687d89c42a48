"""Scenario 4: NCQ priority (SATA 2.6 high/low priority; docs/published-figures.md#yu-et-al-2010:
"NCQ priority exists in the ATA standard but few drives of that
era honoured it").

Best-effort random readers keep the ST3400620AS's queue about 29 deep
while one real-time reader (fio prioclass=1, i.e. IOPRIO_CLASS_RT) does
synchronous 4 KiB random reads over the same whole disk, scheduler none.
Linux (libata, 6.1) sets the PRIO bit of an FPDMA QUEUED command when
/sys/block/sda/device/ncq_prio_enable is 1 and the request's I/O priority
class is RT; the AHCI hook passes it to the device (count bits 15:14 of
the FIS), the trace shows it in the prio column, and a firmware that
honours priority (sched.c) serves queued high-priority commands before
all low-priority ones.

Three boots:
  honoured  the st3400620as parameters with honour_prio = on (a copy of the
            built-in file passed as model-file); phase "on" with
            ncq_prio_enable=1, then phase "off" with ncq_prio_enable=0
  stock     the built-in st3400620as (honour_prio = off, as the real drive
            is assumed to be), ncq_prio_enable=1: the bit arrives, the
            firmware ignores it
  noprio    the built-in model with ncq-prio=off: the device does not
            advertise NCQ priority, libata refuses ncq_prio_enable

The real-time reader's reads start at byte offset 512 + k * 4096, the
best-effort readers' at k * 4096, so a trace record belongs to the
real-time reader when lba % 8 == 1 (marker reads are 1 sector long).
"""

import concurrent.futures
import re
from pathlib import Path

import scenarios as sc

TITLE = "NCQ priority: a real-time reader among best-effort readers"
NUMBER = 4
MODEL = "st3400620as"
CAPACITY = 781422768
MODEL_FILE = (Path(__file__).resolve().parents[2]
              / "hw/ide/ncq-model/models" / f"{MODEL}.ncqm")
BE_JOBS = 4
BE_IODEPTH = 7                    # 4 x 7 + 1 = 29 commands, under 31
RUNTIME_S = 30
MARKER = {"on": 3000001, "off": 3000003, "stock": 3000005,
          "noprio": 3000007}

FIO_JOB = f"""[global]
filename=/dev/sda
direct=1
ioengine=libaio
rw=randread
bs=4k
blockalign=4k
randrepeat=1
time_based=1
runtime={RUNTIME_S}s
[be]
numjobs={BE_JOBS}
iodepth={BE_IODEPTH}
group_reporting=1
[rt]
new_group=1
iodepth=1
prioclass=1
prio=0
offset=512
size={CAPACITY * 512 - 4096}
"""

# phase name -> what the guest writes to ncq_prio_enable
PHASES = {"honoured": ("on", "off"), "stock": ("stock",),
          "noprio": ("noprio",)}


def script(phases):
    lines = ["set -e", f"echo none > {sc.QUEUE}/scheduler",
             f"echo \"prio_supported $(cat {sc.DEV}/ncq_prio_supported)\"",
             f"echo \"queue_depth $(cat {sc.DEV}/queue_depth)\""]
    for ph in phases:
        want = 0 if ph == "off" else 1
        lines += [
            f"if echo {want} > {sc.DEV}/ncq_prio_enable 2>/dev/null; then "
            f"echo \"prio_write {ph} ok\"; else echo \"prio_write {ph} "
            "failed\"; fi",
            f"echo \"prio_enable {ph} $(cat {sc.DEV}/ncq_prio_enable)\"",
            sc.marker_cmd(MARKER[ph]),
            f"fio --output-format=json --output=$RESULTS/{ph}.json "
            "/workload/prio.fio",
        ]
    return "\n".join(lines) + "\n"


def honouring_model(workdir):
    """The built-in parameter file with honour_prio = on, in workdir."""
    text = MODEL_FILE.read_text()
    new, n = re.subn(r"^honour_prio\s*=\s*off\b", "honour_prio = on", text,
                     flags=re.M)
    if n != 1:
        raise ValueError(f"{MODEL_FILE}: no 'honour_prio = off' line")
    path = Path(workdir) / f"{MODEL}-prio.ncqm"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)
    return path


def device(boot, workdir):
    if boot == "honoured":
        return f"ncq-disk,model-file={honouring_model(workdir)}"
    if boot == "noprio":
        return f"ncq-disk,model={MODEL},ncq-prio=off"
    return f"ncq-disk,model={MODEL}"


def _boot(workdir, boot):
    wd = Path(workdir) / boot
    return sc.run_guest(wd, device(boot, wd), script(PHASES[boot]),
                        files={"prio.fio": FIO_JOB}, disk_sectors=CAPACITY,
                        timeout_s=1200)


def _is_rt(rec):
    return rec["lba"] % 8 == 1


def analyse_phase(run, ph, recs):
    fio = run.fio(f"{ph}.json")
    jobs = {j["jobname"]: j["read"] for j in fio["jobs"]}
    rt = [r for r in recs if _is_rt(r)]
    be = [r for r in recs if not _is_rt(r)]
    out = {"prio_write": dict(x.split() for x in run.lines("prio_write")
                              ).get(ph),
           "prio_enable": dict(x.split() for x in run.lines("prio_enable")
                               ).get(ph)}
    for name, job, mine in (("rt", jobs["rt"], rt), ("be", jobs["be"], be)):
        cl = job["clat_ns"]
        out[name] = {
            "fio_iops": job["iops"], "fio_ios": job["total_ios"],
            "clat_ms": {"mean": cl["mean"] / 1e6,
                        "p50": cl["percentile"]["50.000000"] / 1e6,
                        "p99": cl["percentile"]["99.000000"] / 1e6,
                        "max": cl["max"] / 1e6},
            "trace_reads": len(mine),
            "trace_prio1": sum(r["prio"] for r in mine),
            "drive_ms": sc.summary([sc.latency_ms(r) for r in mine]),
            "reasons": sc.histogram_words(r["reason"] for r in mine),
            "drive_series": [round(sc.latency_ms(r), 3) for r in mine],
        }
    return out


def run(workdir):
    workdir = Path(workdir)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futs = {b: pool.submit(_boot, workdir, b) for b in PHASES}
        runs = {b: f.result() for b, f in futs.items()}
    res = {"title": TITLE, "model": MODEL, "be_jobs": BE_JOBS,
           "be_iodepth": BE_IODEPTH, "runtime_s": RUNTIME_S, "boots": {},
           "phases": {}}
    for b, r in runs.items():
        res["boots"][b] = {"device": r.device.replace(str(workdir), "WORK"),
                           "prio_supported": r.lines("prio_supported"),
                           "queue_depth": r.lines("queue_depth"),
                           "guest_s": r.guest_s(), "wall_s": r.wall_s}
        split = sc.split_by_markers(r.records, [MARKER[p] for p in
                                                PHASES[b]])
        for ph in PHASES[b]:
            recs = [x for x in split[MARKER[ph]] if x["op"] == "R"]
            res["phases"][ph] = analyse_phase(r, ph, recs)
            res["phases"][ph]["boot"] = b
    return res


# "No difference": the real-time reader's mean latency within this factor
# of the best-effort readers' (one synchronous reader's few hundred reads
# against the others' thousands: sampling noise of a heavy-tailed
# distribution, not a priority effect, which is a factor of several).
SAME = 1.35
# "Lower": the real-time reader's mean latency below this fraction of the
# best-effort readers' and of its own without priority.
LOWER = 0.5


def _ratio(ph):
    return ph["rt"]["clat_ms"]["mean"] / ph["be"]["clat_ms"]["mean"]


def check(result):
    fails = []
    ph = result["phases"]
    boots = result["boots"]
    for b, want in (("honoured", ["1"]), ("stock", ["1"]),
                    ("noprio", ["0"])):
        if boots[b]["prio_supported"] != want:
            fails.append(f"{b}: ncq_prio_supported "
                         f"{boots[b]['prio_supported']}, expected {want}")
    for p, write, enable in (("on", "ok", "1"), ("off", "ok", "0"),
                             ("stock", "ok", "1"), ("noprio", "failed", "0")):
        if (ph[p]["prio_write"], ph[p]["prio_enable"]) != (write, enable):
            fails.append(f"{p}: writing ncq_prio_enable {ph[p]['prio_write']}"
                         f", it reads {ph[p]['prio_enable']}; expected "
                         f"{write} and {enable}")
    for p in ph:
        for who in ("rt", "be"):
            x = ph[p][who]
            if x["trace_reads"] != x["fio_ios"] or x["fio_ios"] == 0:
                fails.append(f"{p}: {who} fio did {x['fio_ios']} reads, "
                             f"the trace holds {x['trace_reads']}")
        # the PRIO bit reaches the drive exactly for the real-time reads
        # when Linux sets it (ncq_prio_enable=1 on a drive advertising it)
        bit = p in ("on", "stock")
        want_rt = ph[p]["rt"]["trace_reads"] if bit else 0
        if ph[p]["rt"]["trace_prio1"] != want_rt:
            fails.append(f"{p}: {ph[p]['rt']['trace_prio1']} of "
                         f"{ph[p]['rt']['trace_reads']} real-time reads "
                         f"carried PRIO, expected {want_rt}")
        if ph[p]["be"]["trace_prio1"]:
            fails.append(f"{p}: {ph[p]['be']['trace_prio1']} best-effort "
                         "reads carried PRIO")
        prio_picks = sum(ph[p][w]["reasons"].get("priority", 0)
                         for w in ("rt", "be"))
        if (p == "on") != (prio_picks > 0):
            fails.append(f"{p}: the firmware made {prio_picks} priority "
                         "picks")
    on = ph["on"]
    if not _ratio(on) < LOWER:
        fails.append(f"on: real-time mean latency "
                     f"{on['rt']['clat_ms']['mean']:.1f} ms is not below "
                     f"{LOWER} x the best-effort "
                     f"{on['be']['clat_ms']['mean']:.1f} ms")
    if not on["rt"]["clat_ms"]["mean"] < \
            LOWER * ph["off"]["rt"]["clat_ms"]["mean"]:
        fails.append(f"real-time mean latency with priority "
                     f"{on['rt']['clat_ms']['mean']:.1f} ms is not below "
                     f"{LOWER} x without "
                     f"{ph['off']['rt']['clat_ms']['mean']:.1f} ms")
    for p in ("off", "stock", "noprio"):
        r = _ratio(ph[p])
        if not 1 / SAME < r < SAME:
            fails.append(f"{p}: real-time / best-effort mean latency {r:.2f}"
                         f", expected no difference (within x{SAME})")
    return fails


ORDER = ("on", "off", "stock", "noprio")
LABEL = {"on": "honouring firmware, ncq_prio_enable=1",
         "off": "honouring firmware, ncq_prio_enable=0",
         "stock": "st3400620as as built in (ignores PRIO), "
                  "ncq_prio_enable=1",
         "noprio": "ncq-prio=off (not advertised)"}


def figures(result):
    out = []
    for p in ORDER:
        ph = result["phases"][p]
        rt, be = ph["rt"], ph["be"]
        out.append(
            f"{p:6}: real-time {rt['fio_iops']:5.1f} reads/s mean "
            f"{rt['clat_ms']['mean']:6.1f} ms p99 {rt['clat_ms']['p99']:7.1f}"
            f" ms; best-effort {be['fio_iops']:5.1f} reads/s mean "
            f"{be['clat_ms']['mean']:6.1f} ms p99 {be['clat_ms']['p99']:7.1f}"
            f" ms; ratio {_ratio(ph):.2f}; PRIO bit on "
            f"{rt['trace_prio1']}/{rt['trace_reads']} real-time reads, "
            f"priority picks {rt['reasons'].get('priority', 0)}, "
            f"best-effort reads forced by the starvation time-out "
            f"{be['reasons'].get('timeout', 0)}")
    for b, x in result["boots"].items():
        out.append(f"{b}: guest time {x['guest_s']:.1f} s, wall "
                   f"{x['wall_s']:.1f} s")
    return out


def plot(result, outdir):
    plt = sc.pyplot()
    fig, ax = plt.subplots(figsize=(7, 6))
    styles = {"on": ("C2", "-"), "off": ("C1", "-"), "stock": ("C3", "--"),
              "noprio": ("C0", ":")}
    for p in ORDER:
        ph = result["phases"][p]
        color, ls = styles[p]
        xs, ys = sc.cdf(ph["rt"]["drive_series"])
        ax.step(xs, ys, where="post", color=color, linestyle=ls,
                label=f"real-time: {LABEL[p]}")
        if p == "on":
            xs, ys = sc.cdf(ph["be"]["drive_series"])
            ax.step(xs, ys, where="post", color=color, linestyle="-.",
                    label=f"best-effort: {LABEL[p]}")
    xs, ys = sc.cdf(result["phases"]["off"]["be"]["drive_series"])
    ax.step(xs, ys, where="post", color="grey", linestyle="-.",
            label=f"best-effort: {LABEL['off']}")
    ax.set_xscale("log")
    ax.set_xlabel("drive latency (ms, device trace)")
    ax.set_ylabel("fraction of reads")
    ax.set_title("NCQ priority, ST3400620AS, ~29 commands queued")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    return [sc.save(fig, Path(outdir) / "s4-prio-cdf.png")]


def report_md(result, pngs):
    cmd = sc.report_command(NUMBER)
    rows = []
    for p in ORDER:
        ph = result["phases"][p]
        rt, be = ph["rt"], ph["be"]
        rows.append([LABEL[p], ph["prio_enable"],
                     f"{rt['trace_prio1']}/{rt['trace_reads']}",
                     rt["reasons"].get("priority", 0),
                     f"{rt['fio_iops']:.1f}",
                     f"{rt['clat_ms']['mean']:.1f}",
                     f"{rt['clat_ms']['p99']:.0f}",
                     f"{be['fio_iops']:.1f}",
                     f"{be['clat_ms']['mean']:.1f}",
                     f"{be['clat_ms']['p99']:.0f}",
                     be["reasons"].get("timeout", 0),
                     f"**{_ratio(ph):.2f}**"])
    table = sc.md_table(
        ["drive", "ncq_prio_enable", "RT reads with PRIO", "priority picks",
         "RT reads/s", "RT mean ms", "RT p99 ms", "BE reads/s",
         "BE mean ms", "BE p99 ms", "BE time-outs", "RT / BE mean"], rows)
    fails = check(result)
    verdict = "holds" if not fails else "does NOT hold: " + "; ".join(fails)
    imgs = "\n\n".join(f"![{p.stem}]({p.name})\n\n*Produced by `{cmd}`.*"
                       for p in pngs)
    on, off = result["phases"]["on"], result["phases"]["off"]
    return f"""## Scenario 4: {TITLE}

Set-up: the ST3400620AS model on a sparse qcow2 of its full 400 GB,
scheduler `none`, `queue_depth` 32 (Linux's default for this drive).
{result['be_jobs']} best-effort fio jobs of 4 KiB random O_DIRECT reads
over the whole disk (libaio, iodepth {result['be_iodepth']} each) and one
real-time job (fio `prioclass=1`, I/O priority class RT, iodepth 1: one
synchronous read at a time) on the same span, for {result['runtime_s']} s
of guest time; at most 29 commands in the drive, so no request waits for
a tag in the host. Three boots: the st3400620as parameters with
`honour_prio = on` (a copy of the built-in file, `model-file=`), run with
`ncq_prio_enable` 1 and then 0; the built-in st3400620as (`honour_prio =
off`: the real drive is assumed not to honour priority, as few of its era
did) with `ncq_prio_enable` 1; and the device with `ncq-prio=off`.
Produced by `{cmd}` (test: `NCQ_LONG_SCENARIOS=1 python3 -m pytest -q
guest-tests/test_scenarios.py -k s4-prio`).

{table}

*Table produced by `{cmd}`.* RT/BE: the real-time job and the four
best-effort jobs together (fio group reporting); latencies are fio's
completion latencies in ms. "RT reads with PRIO": real-time reads whose
FPDMA QUEUED command carried the high-priority bit, out of all real-time
reads (device trace, `prio` column; the real-time job's reads start 512
bytes off the 4 KiB grid, so the trace tells them apart by LBA).
"priority picks": real-time reads the firmware picked because they were
high priority (trace `reason` = `priority`). "BE time-outs": best-effort
reads the firmware served only because they had waited the starvation
time-out (2 s; trace `reason` = `timeout`).

The phenomenon {verdict}. How the bit travels: Linux 6.1's libata marks an
FPDMA QUEUED command high priority (PRIO field, bits 15:14 of the count)
when the drive advertises NCQ priority (IDENTIFY word 76 bit 12 and the
SATA settings log), `ncq_prio_enable` is 1 and the request's I/O priority
class is RT; the device's AHCI hook passes the bit to the model
(hw/ide/ncq-disk/ncq-disk-queue.c); a firmware that honours priority (sched.c)
considers only the queued high-priority commands while there are any,
with SPTF among them (an optional `prio-timeout` would force one that
waited longer). With priority honoured the real-time read waits for the
access in progress and its own access, not for the ~28 best-effort
commands ahead of it: mean {on['rt']['clat_ms']['mean']:.1f} ms against
{off['rt']['clat_ms']['mean']:.1f} ms without priority. Without honouring
(ncq_prio_enable 0, a firmware that ignores the bit although Linux sets
it, or a drive that does not advertise it) the real-time reader is just
one more reader for SPTF and its latency is the best-effort readers'.

The price is visible too: this real-time reader always has a read
queued, and a firmware that honours priority strictly serves no
best-effort command while a high-priority one waits, so the best-effort
readers fall from {off['be']['fio_iops']:.0f} to {on['be']['fio_iops']:.0f}
reads/s and are served mostly by the 2 s starvation time-out
({on['be']['reasons'].get('timeout', 0)} of their
{on['be']['trace_reads']} reads), and the total falls from
{off['be']['fio_iops'] + off['rt']['fio_iops']:.0f} to
{on['be']['fio_iops'] + on['rt']['fio_iops']:.0f} reads/s because SPTF
no longer chooses among the queue. (How a drive weighs high-priority
service against the rest is up to its firmware; the model's is strict
priority, bounded for the low-priority side only by the starvation
time-out; `prio-timeout` forces old high-priority commands.)
[Yu et al. 2010](../published-figures.md#yu-et-al-2010) note that few drives of the ST3400620AS's era
honoured NCQ priority; the built-in model follows that, so the benefit needs a drive
that honours it.

{imgs}
"""
