"""Boot once, restore many: the guest harness's snapshot cache.

A guest boots with `ncq.snapshot ncq.hotplug` on its command line,
`-device pvpanic` and `-action panic=pause`, and no drive under test.
Once its modules are loaded, the image's /init writes to the pvpanic
port: the vCPU stops at that instruction, QEMU pauses, and the harness
migrates the paused VM to a file.  Every later run with the same inputs
starts QEMU with `-incoming file:STATE`, plugs its own drive in while the
guest is still stopped (`drive_add`, `device_add` on ide.0) and `cont`:
the guest goes on from the write, libata finds the hot-plugged drive,
/init reads its workload from fw_cfg (which is not part of the saved
state) and runs it.  The stop and the plug are at an instruction, not at
a moment of the host's choosing, so under icount the saved state is the
same on every machine and every restored run is deterministic.

The cache key covers every input of the boot: the QEMU binary, the kernel
and initramfs, the whole QEMU command line with the run's own paths
replaced by placeholders, and this module's format.  The drive is not an
input of the boot, so every device line (model, properties, disk size)
shares one entry per kernel, memory size, vCPU count and extra options.
A changed input gives another key, hence a fresh boot.

Layout: $NCQ_CACHE/snapshots/<key>/ ($NCQ_SNAPSHOT_DIR/<key>/ if set)
    state        the migration stream (written last, renamed into place)
    boot.log     the boot's console up to the snapshot point
    inputs.txt   what the key was made of, readable
The cache keeps the SNAPSHOT_KEEP most recently used entries, and never
removes one that the running test command has used: scripts/test.sh (or a
pytest run started alone, conftest.py) sets NCQ_SNAPSHOT_SESSION to its
start time; while it is set, runs do not prune, and the clean-up at the end
of the session spares every entry used since then, however many there are.
So the test command evicts nothing it needs, neither what it made nor what
an earlier run left for it (NCQ_SNAPSHOT_KEEP only bounds what other work
leaves).
"""

import fcntl
import hashlib
import os
import shutil
import time
from pathlib import Path

FORMAT = "ncq-snapshot 2"   # 2: the drive is plugged in after the restore
# Entries kept (least recently used go first); each is one guest's RAM
# in use, about 100-200 MB.
SNAPSHOT_KEEP = int(os.environ.get("NCQ_SNAPSHOT_KEEP", "48"))

_digests = {}


def enabled():
    """Snapshots are on unless NCQ_SNAPSHOT=0."""
    return os.environ.get("NCQ_SNAPSHOT", "1") != "0"


def root(cache):
    """Where the entries are: $NCQ_SNAPSHOT_DIR, else CACHE/snapshots."""
    return Path(os.environ.get("NCQ_SNAPSHOT_DIR") or
                Path(cache) / "snapshots")


def file_digest(path):
    """sha256 of a file, remembered per (path, size, mtime) in this
    process: the QEMU binary and the initramfs are hashed once."""
    st = os.stat(path)
    memo = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if memo not in _digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _digests[memo] = h.hexdigest()
    return _digests[memo]


def key(canonical_cmd, files):
    """The cache key of a boot: its canonical command line (a list of
    strings, paths replaced) and the digests of the files it reads."""
    text = inputs_text(canonical_cmd, files)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def inputs_text(canonical_cmd, files):
    lines = [FORMAT]
    lines += [f"file {name} sha256 {file_digest(path)}"
              for name, path in sorted(files.items())]
    lines += [f"arg {a}" for a in canonical_cmd]
    return "\n".join(lines) + "\n"


class Entry:
    """One cache entry: directory base/key."""

    def __init__(self, base, key_):
        self.dir = Path(base) / key_
        self.key = key_
        self.state = self.dir / "state"
        self.boot_log = self.dir / "boot.log"
        self.inputs = self.dir / "inputs.txt"

    def ready(self):
        return self.state.exists()

    def touch(self):
        """Mark as used now (for the least-recently-used clean-up)."""
        try:
            os.utime(self.dir)
        except FileNotFoundError:
            pass

    def lock(self):
        """An exclusive lock on the entry (a file object; closing it
        unlocks): concurrent runs with the same key boot only once."""
        self.dir.mkdir(parents=True, exist_ok=True)
        f = open(self.dir.parent / f".{self.key}.lock", "w")
        fcntl.flock(f, fcntl.LOCK_EX)
        return f

    def drop(self):
        """Remove a state that failed to restore."""
        shutil.rmtree(self.dir, ignore_errors=True)


SESSION_ENV = "NCQ_SNAPSHOT_SESSION"


def session_start():
    """The start (epoch seconds) of the test command this process belongs
    to ($NCQ_SNAPSHOT_SESSION), or None."""
    v = os.environ.get(SESSION_ENV)
    try:
        return float(v) if v else None
    except ValueError:
        return None


def prune_now():
    """Whether a run may prune now: not inside a test command (which
    prunes once, at its end)."""
    return session_start() is None


def prune(base, keep=SNAPSHOT_KEEP, protect_since=None):
    """Delete the least recently used entries of directory `base` beyond
    `keep`; an entry used at or after protect_since (epoch seconds) is
    never deleted and does not count against `keep`."""
    base = Path(base)
    if not base.is_dir():
        return
    entries = [d for d in base.iterdir() if d.is_dir()]
    if protect_since is not None:
        entries = [d for d in entries if d.stat().st_mtime < protect_since]
    entries.sort(key=lambda d: d.stat().st_mtime, reverse=True)
    for d in entries[keep:]:
        lock = base / f".{d.name}.lock"
        with open(lock, "w") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue        # in use
            if time.time() - d.stat().st_mtime > 60:
                shutil.rmtree(d, ignore_errors=True)
