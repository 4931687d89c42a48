"""One QEMU process of the guest harness and its QMP connection.

QemuProcess is an async context manager: it starts QEMU, connects to its
QMP socket, and on leaving kills QEMU if it still runs.  Besides waiting
for the guest to finish, it can save a VM paused at the snapshot point
(save) and start a restored one (resume); ncqguest.Guest decides which.
"""

import asyncio
import os
import subprocess
import time

# Migration to a file is not a network: no bandwidth cap (QEMU's default
# is 128 MiB/s, seconds for a booted guest's RAM).
SAVE_BANDWIDTH = 1 << 40


class RestoreFailed(Exception):
    """QEMU could not load a saved state (the run may boot instead)."""


class QemuExited(Exception):
    """QEMU ended before the state it was waited for; the message holds
    the end of its stderr."""


def console_tail(path, lines=40):
    if not path.exists():
        return "(no console output)"
    text = path.read_text(errors="replace").splitlines()
    return "--- console tail ---\n" + "\n".join(text[-lines:])


class QemuProcess:

    def __init__(self, cmd, stderr_path, qmp_sock, deadline):
        self.cmd = cmd
        self.stderr_path = stderr_path
        self.sock = str(qmp_sock)
        self.deadline = deadline
        self.proc = None
        self.qmp = None
        self._err = None

    @property
    def returncode(self):
        return self.proc.returncode

    def stderr_tail(self):
        return self.stderr_path.read_text(errors="replace").strip()[-2000:]

    async def __aenter__(self):
        self._err = open(self.stderr_path, "wb")
        self.proc = await asyncio.create_subprocess_exec(
            *self.cmd, stdin=subprocess.DEVNULL, stdout=self._err,
            stderr=self._err)
        self.qmp = await self._connect()
        return self

    async def __aexit__(self, *exc):
        if self.qmp is not None and self.qmp.runstate.name != "IDLE":
            try:
                await self.qmp.disconnect()
            except Exception:
                pass
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self._err.close()
        return False

    async def _connect(self):
        """A QMPClient connected to QEMU, or None if QEMU ended (or never
        made its socket) within 30 s."""
        from qemu.qmp import ConnectError, QMPClient

        t0 = time.monotonic()
        while not os.path.exists(self.sock):
            if self.proc.returncode is not None or time.monotonic() > t0 + 30:
                return None
            await asyncio.sleep(0.02)
        qmp = QMPClient("ncq-guest")
        # the socket file appears at bind(), a moment before QEMU
        # listens: a loaded host may refuse the first try
        while True:
            try:
                await qmp.connect(self.sock)
                return qmp
            except ConnectError:
                # QEMU quitting at startup (a bad property, a state it
                # cannot load) closes the socket mid-negotiation
                try:
                    await asyncio.wait_for(self.proc.wait(), 0.5)
                    return None
                except asyncio.TimeoutError:
                    pass
                if time.monotonic() > t0 + 30:
                    raise

    async def _status(self):
        """QEMU's run state, or None once QEMU has ended."""
        if self.proc.returncode is not None or self.qmp is None:
            return None
        try:
            return (await self.qmp.execute("query-status"))["status"]
        except Exception:
            await asyncio.sleep(0.05)
            if self.proc.returncode is not None:
                return None
            raise

    async def _poll(self, done, what, period=0.05):
        """Poll QMP until done(reply) is true; raise QemuExited if QEMU
        ends first, asyncio.TimeoutError past the deadline."""
        while True:
            status = await self._status()
            if status is None:
                await self.proc.wait()
                raise QemuExited(f"QEMU exited ({self.proc.returncode}) "
                                 f"before {what}: {self.stderr_tail()}")
            if done(status):
                return status
            if time.monotonic() > self.deadline:
                raise asyncio.TimeoutError
            await asyncio.sleep(period)

    async def wait_exit(self):
        await asyncio.wait_for(self.proc.wait(),
                               max(1, self.deadline - time.monotonic()))

    async def save(self, path):
        """Wait for the guest to stop at the snapshot point, migrate the
        paused VM to @path, quit."""
        await self._poll(lambda s: s == "guest-panicked",
                         "the guest reached the snapshot point", 0.1)
        await self.qmp.execute("migrate-set-parameters",
                               {"max-bandwidth": SAVE_BANDWIDTH})
        await self.qmp.execute("migrate", {"uri": f"file:{path}"})
        while True:
            mig = await self.qmp.execute("query-migrate")
            if mig.get("status") == "completed":
                break
            if mig.get("status") in ("failed", "cancelled"):
                raise QemuExited("saving the snapshot failed: "
                                 f"{mig.get('error-desc', mig)}")
            if time.monotonic() > self.deadline:
                raise asyncio.TimeoutError
            await asyncio.sleep(0.05)
        try:
            await self.qmp.execute("quit")
        except Exception:
            pass                # QEMU may close the socket first
        await self.wait_exit()

    async def resume(self, before_cont=None):
        """Wait for QEMU to load the incoming state, then let the guest
        go on from the snapshot point.  before_cont, if given, is an async
        function of the QMP client run while the guest is still stopped
        there (the harness plugs the drive in with it)."""
        try:
            status = await self._poll(lambda s: s != "inmigrate",
                                      "loading the snapshot")
        except QemuExited as e:
            if "migration" in str(e):
                raise RestoreFailed(str(e))
            return              # a startup error: the caller reports it
        if status not in ("guest-panicked", "paused"):
            raise RestoreFailed(f"run state {status} after loading")
        if before_cont is not None:
            await before_cont(self.qmp)
        await self.qmp.execute("cont")
