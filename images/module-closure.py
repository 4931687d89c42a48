#!/usr/bin/env python3
"""The kernel modules an image needs for NAMES, as the kernel loads them.

  images/module-closure.py MODDIR [--required NAME]... NAME...

MODDIR is a lib/modules/<release> tree with depmod's indexes.  Prints, one
a line and sorted, the path (as modules.dep writes it) of every module the
names need: each name's module, what modules.dep says it depends on, and
its soft dependencies (modules.softdep, which depmod writes from each
module's `softdep` modinfo, and that modinfo itself, read from the module
file).  modprobe loads a soft dependency before (pre:) or after (post:) the
module, and a module whose dependency is missing may load and then fail:
f2fs declares `softdep: pre: crc32` and, without it, its mount says
"Cannot load crc32 driver".

A soft dependency names a module or an alias (modules.alias): "crc32" is
an alias of crc32_generic and crc32-pclmul; every module an alias names
comes in, since which one loads depends on the guest's CPU.  The crypto
API asks for an algorithm NAME by the alias "crypto-NAME", so a name
also resolves through it.  A module's own request_module() calls that no
modinfo declares cannot be seen here: --module NAME adds them by hand.

A name that is built into the kernel (modules.builtin) needs nothing; a
name absent from the kernel is left out with a note on stderr, except a
--required one (the user's --module): that is an error, exit status 2.
"""
import fnmatch
import gzip
import lzma
import re
import sys
from pathlib import Path


def norm(name):
    """A module's name as the kernel compares it: no folder, no .ko
    suffix, '-' and '_' alike."""
    name = name.rsplit("/", 1)[-1]
    name = re.sub(r"\.ko(\..*)?$", "", name)
    return name.replace("-", "_")


class Kernel:
    """A lib/modules/<release> tree's indexes."""

    def __init__(self, moddir):
        self.dir = Path(moddir)
        self.deps = {}          # path -> [paths]
        self.by_name = {}       # normalised name -> path
        for line in self._lines("modules.dep"):
            path, _, deps = line.partition(":")
            self.deps[path] = deps.split()
            self.by_name[norm(path)] = path
        self.builtin = {norm(x) for x in self._lines("modules.builtin")}
        # aliases: a literal one by its name; a pattern (pci:v...d*) under
        # its literal prefix, which a name must start with to match it
        self.literal = {}       # alias -> {normalised module names}
        self.patterns = []      # (prefix, pattern, normalised module name)
        for line in self._lines("modules.alias"):
            f = line.split()
            if len(f) != 3 or f[0] != "alias":
                continue
            glob = re.search(r"[*?\[]", f[1])
            if glob:
                self.patterns.append((f[1][:glob.start()], f[1], norm(f[2])))
            else:
                self.literal.setdefault(f[1], set()).add(norm(f[2]))
        self.softdeps = {}      # normalised name -> [names]
        self.has_softdep = (self.dir / "modules.softdep").exists()
        for line in self._lines("modules.softdep"):
            f = line.split()
            if len(f) >= 2 and f[0] == "softdep":
                self.softdeps.setdefault(norm(f[1]), []).extend(
                    w for w in f[2:] if not w.endswith(":"))

    def _lines(self, name):
        p = self.dir / name
        if not p.exists():
            return []
        return [x for x in p.read_text().splitlines()
                if x.strip() and not x.startswith("#")]

    def modinfo_softdeps(self, path):
        """The names of the module file's own `softdep=` modinfo (the
        module compressed as Debian ships it, or not)."""
        f = self.dir / path
        try:
            if path.endswith(".xz"):
                data = lzma.decompress(f.read_bytes())
            elif path.endswith(".gz"):
                data = gzip.decompress(f.read_bytes())
            elif path.endswith(".ko"):
                data = f.read_bytes()
            else:       # .zst: no reader in the standard library
                return []
        except (OSError, lzma.LZMAError, gzip.BadGzipFile):
            return []
        names = []
        for m in re.finditer(rb"(?:^|\0)softdep=([^\0]*)", data):
            names += [w for w in m[1].decode(errors="replace").split()
                      if not w.endswith(":")]
        return names

    def resolve(self, name):
        """(paths, how): the modules a name stands for: the module of that
        name, and every module an alias of the name or of "crypto-NAME"
        names (a crypto user's soft dependency "crc32" is met by the crypto
        API's "crypto-crc32", crc32_generic, even where a library module
        named crc32 is built in).  how is "module", "builtin" or None when
        nothing has it."""
        n = norm(name)
        paths = [self.by_name[n]] if n in self.by_name else []
        wanted = [name] if name.startswith("crypto-") else \
            [name, "crypto-" + name]
        mods = set()
        for w in wanted:
            mods |= self.literal.get(w, set())
            mods |= {mod for prefix, pat, mod in self.patterns
                     if w.startswith(prefix) and fnmatch.fnmatchcase(w, pat)}
        mods = sorted(mods)
        paths += [self.by_name[m] for m in mods
                  if m in self.by_name and self.by_name[m] not in paths]
        if paths:
            return paths, "module"
        if n in self.builtin or any(m in self.builtin for m in mods):
            return [], "builtin"
        return [], None

    def closure(self, names, required=(), log=print):
        """The sorted paths NAMES need (module dependencies and soft
        dependencies, transitively).  A name in @required that resolves
        to nothing raises LookupError."""
        picked = set()
        todo = []
        for name in names:
            paths, how = self.resolve(name)
            if how is None:
                if name in required:
                    raise LookupError(name)
                log(f"note: module {name}: not in this kernel, left out")
            elif how == "builtin":
                log(f"module {name}: built into the kernel")
            todo += paths
        while todo:
            path = todo.pop()
            if path in picked:
                continue
            picked.add(path)
            todo += self.deps.get(path, [])
            # depmod writes every module's softdep modinfo into
            # modules.softdep; a tree without that file: the modinfo itself
            soft = self.softdeps.get(norm(path), []) if self.has_softdep \
                else self.modinfo_softdeps(path)
            for dep in dict.fromkeys(soft):
                paths, how = self.resolve(dep)
                new = [p for p in paths if p not in picked]
                if new:
                    log(f"module {norm(path)}: soft dependency {dep}: "
                        f"{', '.join(norm(p) for p in new)}")
                todo += paths
        return sorted(picked)


USAGE = "usage: module-closure.py MODDIR [--required NAME]... NAME..."


def main(argv):
    positional, required = [], []
    it = iter(argv)
    for a in it:
        if a == "--required":
            v = next(it, None)
            if v is None:
                sys.exit("module-closure: --required needs a module name")
            required.append(v)
        elif a.startswith("-"):
            sys.exit(f"module-closure: unknown option {a} ({USAGE})")
        else:
            positional.append(a)
    if not positional:
        sys.exit(USAGE)
    moddir, names = positional[0], positional[1:] + required
    kernel = Kernel(moddir)
    if not kernel.deps:
        sys.exit(f"module-closure: {moddir} has no modules.dep (run depmod)")
    try:
        paths = kernel.closure(names, required,
                               log=lambda m: print(m, file=sys.stderr))
    except LookupError as e:
        print(f"module-closure: --module {e.args[0]}: no such module or "
              f"alias in kernel {Path(moddir).name} (its modules.dep and "
              f"modules.alias): check the name (modinfo {e.args[0]} on a "
              "machine running it)", file=sys.stderr)
        return 2
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
