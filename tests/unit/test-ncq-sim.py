#!/usr/bin/env python3
# ncq-sim end to end: trace output in the shared schema, replay of that
# trace reproduces it exactly (same model and seed), plain CSV replay,
# sweep rows, one-line errors for bad arguments.
# Usage: test-ncq-sim.py PATH/TO/ncq-sim
# SPDX-License-Identifier: GPL-2.0-or-later
import os
import re
import subprocess
import sys
import tempfile

SIM = sys.argv[1]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print('FAIL:', what)


def run(*args, ok=True):
    p = subprocess.run([SIM] + list(args), capture_output=True, text=True)
    if ok and p.returncode != 0:
        print('unexpected failure:', args, p.stderr)
    return p


def records(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return lines[0], lines[1], lines[2:]


with tempfile.TemporaryDirectory() as d:
    tr = os.path.join(d, 'a.csv')
    p = run('--count', '2000', '--depth', '31', '--trace', tr)
    check(p.returncode == 0, 'closed loop runs')
    check('IOPS' in p.stdout and 'delay count' in p.stdout, 'summary')
    magic, cols, recs = records(tr)
    check(magic.startswith('# ncq-trace v2 '), 'versioned header: ' + magic)
    check(cols.split(',')[0] == 'tag' and len(cols.split(',')) == 18,
          'columns')
    check(len(recs) == 2000, 'one record per command: %d' % len(recs))
    tr2 = os.path.join(d, 'b.csv')
    p = run('--replay', tr, '--trace', tr2)
    check(p.returncode == 0, 'replay of an ncq-trace runs')
    _, _, recs2 = records(tr2)
    check(recs2 == recs, 'replay reproduces the captured trace exactly')

    # the header's model and seed are the defaults of a replay
    tr3 = os.path.join(d, 'c.csv')
    tr4 = os.path.join(d, 'd.csv')
    run('--model', 'intel-530', '--seed', '7', '--count', '500',
        '--read-ratio', '0.5', '--trace', tr3)
    run('--replay', tr3, '--trace', tr4)
    m3, _, r3 = records(tr3)
    m4, _, r4 = records(tr4)
    check(m3 == m4 and 'model=intel-530 seed=7' in m4, 'origin: ' + m4)
    check(r3 == r4, 'replay with the header model and seed is exact')

    plain = os.path.join(d, 'plain.csv')
    with open(plain, 'w') as f:
        f.write('time_ns,op,lba,sectors,prio\n')
        for i in range(200):
            f.write('%d,%s,%d,8,%d\n' % (i * 1000000, 'RW'[i % 2],
                                         (i * 7919 * 8) % 700000000,
                                         i % 5 == 0))
        f.write('300000000,F,0,0,0\n')
    p = run('--replay', plain, '--clustering', '32', '--quiet')
    check(p.returncode == 0 and p.stdout.startswith('iops'),
          'plain CSV replay: ' + p.stdout + p.stderr)

    p = run('--sweep-depth', '1,4', '--count', '500')
    rows = p.stdout.splitlines()
    check(len(rows) == 3 and rows[0].split()[0] == 'depth', 'sweep rows')

    p = run('--count', '300', '--group', '20:0:20%', '--group',
            '1:80%:100%:prio', '--depth', '21', '--prio-timeout', '50',
            '--policy', 'aged-sptf', '--aging-weight', '0.5', '--quiet')
    check(p.returncode == 0, 'client groups: ' + p.stderr)

    # --prio-timeout is only the time-out: priority is --honour-prio's
    prio = ['--count', '300', '--group', '20:0:20%', '--group',
            '1:80%:100%:prio', '--depth', '21', '--quiet']
    unprio = run(*prio).stdout
    check(run(*prio, '--prio-timeout', '1').stdout == unprio,
          '--prio-timeout alone changed the run: it turned priority on')
    check(run(*prio, '--honour-prio', 'on', '--prio-timeout', '1').stdout
          != plain, '--honour-prio on changed nothing')

    # every setting of the library's table is an option, its bounds the
    # table's: the upper bound taken, one step past refused
    helptext = run('--help').stdout
    section = helptext.split('settings (')[1].split('workload')[0]
    names = re.findall(r'^  --([a-z-]+) V', section, re.M)
    listed = re.findall(r'^\| `([a-z-]+)` \|', run('--list-settings').stdout,
                        re.M)
    check(names == listed and len(names) > 0,
          'settings in --help %s, in --list-settings %s' % (names, listed))
    for name, hi, unit in re.findall(
            r'^  --([a-z-]+) V.*\n +0\.\.([0-9.]+)( ms)?$', section, re.M):
        if '.' in hi:
            continue
        step = '.001' if unit else ''
        p = run('--' + name, hi, '--count', '50', '--quiet')
        check(p.returncode == 0, '--%s %s: %s' % (name, hi, p.stderr))
        p = run('--' + name, hi + step if step else str(int(hi) + 1),
                ok=False)
        check(p.returncode != 0 and 'out of range' in p.stderr,
              '--%s past %s: %s' % (name, hi, p.stderr))

    # every setting and each of its old spellings is an option that takes
    # a value of the setting's range (on/off and names too, which the
    # bounds above do not reach)
    rows = re.findall(r'^\| `([a-z-]+)` \| `\w+` \| ([^|]+) \| ([^|]*) \|',
                      run('--list-settings').stdout, re.M)
    check([r[0] for r in rows] == listed,
          'settings rows read %s, listed %s' % (rows, listed))
    for name, rng, aliases in rows:
        value = ('off' if rng.strip() == 'on or off' else
                 re.split(r'[ ,]', rng.strip())[0].split('..')[0])
        for opt in [name] + re.findall(r'`([a-z-]+)`', aliases):
            p = run('--' + opt, value, '--count', '50', '--quiet', ok=False)
            check(p.returncode == 0,
                  'setting %s: --%s %s: %s' % (name, opt, value, p.stderr))

    p = run('--model', 'intel-530', '--group', '4:0:50%:size=8:read=1',
            '--group', '4:50%:100%:size=256:read=0:stream', '--count', '2000')
    lines = [l for l in p.stdout.splitlines() if l.startswith('group')]
    check(len(lines) == 2 and 'MB/s' in lines[0], 'per-group figures')

    for model in ['intel-530', 'quantum-atlas10k']:
        p = run('--model', model, '--count', '300', '--read-ratio', '0.5',
                '--size', '8,64,256', '--pattern', 'seq', '--quiet')
        check(p.returncode == 0, model)

    bad = [['--depth', '99'], ['--policy', 'elevator'], ['--model', 'nope'],
           ['--size', '0'], ['--read-ratio', '2'], ['--lba-range', '5'],
           ['--group', 'x'], ['--group', '1:0:10:size=0'],
           ['--group', '1:0:10:read=3'], ['--group', '1:0:10:what'],
           ['--model-file', '/nonexistent'],
           ['--replay', '/nonexistent'], ['--frobnicate'], ['extra']]
    for args in bad:
        p = run(*args, ok=False)
        err = p.stderr.strip()
        check(p.returncode != 0, 'rejects %s' % args)
        check(err.startswith('ncq-sim') and '\n' not in err,
              'one-line error for %s: %r' % (args, err))
    p = run('--model', 'nope', ok=False)
    check('known models: st3400620as' in p.stderr, 'lists known models')

    # numbers and durations go through the library's parser: the same
    # value written two ways gives the same run
    same = [(['--timeout', '2000'], ['--timeout', '2s']),
            (['--prio-timeout', '0.5'], ['--prio-timeout', '500us']),
            (['--duration', '0.25', '--quiet'],
             ['--duration', '250ms', '--quiet']),
            (['--seed', '16'], ['--seed', '0x10']),
            (['--lba-range', '256:65536'], ['--lba-range', '0x100:0x10000']),
            (['--read-ratio', '0.5'], ['--read-ratio', '0.500000000']),
            (['--aging-weight', '0.5', '--policy', 'aged-sptf'],
             ['--aging-weight', '0.5004', '--policy', 'aged-sptf'])]
    for a, b in same:
        pa = run('--count', '400', '--quiet', *a)
        pb = run('--count', '400', '--quiet', *b)
        check(pa.returncode == 0 and pa.stdout == pb.stdout,
              '%s == %s: %r %r' % (a, b, pa.stdout, pb.stdout))
    # ... and a different value a different one (the checks above can fail)
    pa = run('--count', '400', '--quiet', '--seed', '0x10')
    pb = run('--count', '400', '--quiet', '--seed', '0x11')
    check(pa.stdout != pb.stdout, 'seeds 0x10 and 0x11 differ')
    for args in [['--timeout', '1e3'], ['--timeout', '5x'],
                 ['--read-ratio', '1.0000000001'], ['--read-ratio', '.5'],
                 ['--duration', '-1s'], ['--lba-range', '0:100.1%'],
                 ['--seed', '0x'], ['--aging-weight', '1/2'],
                 # a 32-bit field refuses what it cannot hold (no wrap to 0)
                 ['--clustering', '4294967296'], ['--align', '0x100000000']]:
        p = run(*args, ok=False)
        err = p.stderr.strip()
        # the option's last word: "range" for --lba-range
        check(p.returncode == 2 and err.startswith('ncq-sim: ') and
              args[0].split('-')[-1] in err and '\n' not in err,
              'one-line error naming the option for %s: %r' % (args, err))

    # the read ratio splits the draws: about a quarter reads
    tr5 = os.path.join(d, 'e.csv')
    run('--count', '4000', '--read-ratio', '0.25', '--trace', tr5)
    _, _, r5 = records(tr5)
    reads = sum(1 for r in r5 if r.split(',')[1] in ('R', 'read'))
    check(0.22 * 4000 < reads < 0.28 * 4000, 'read ratio 0.25: %d' % reads)
    # percentages of the capacity (st3400620as: 781422768 sectors)
    tr6 = os.path.join(d, 'f.csv')
    run('--count', '2000', '--lba-range', '20%:30%', '--trace', tr6)
    _, _, r6 = records(tr6)
    lbas = [int(r.split(',')[2]) for r in r6]
    check(min(lbas) >= 781422768 * 2 // 10 and
          max(lbas) + 8 <= 781422768 * 3 // 10,
          '20%%:30%% range: %d..%d' % (min(lbas), max(lbas)))

# --end-flush: one FLUSH after the last completion, its time in the run's
# (a write run no longer ends with data only in the cache), not in the
# commands' latencies
def full(*args):
    out = run(*args).stdout
    secs = float(out.split(' s simulated')[0].split()[-1])
    lat = [l for l in out.splitlines() if l.startswith('latency ms')]
    fl = [float(l.split()[2]) for l in out.splitlines()
          if l.startswith('end flush')]
    return secs, lat, fl


with tempfile.TemporaryDirectory() as d:
    w = ('--count', '400', '--read-ratio', '0', '--write-cache', 'on',
         '--host-delay-ns', '20000')
    s0, lat0, fl0 = full(*w)
    s1, lat1, fl1 = full(*(w + ('--end-flush',)))
    check(fl0 == [] and len(fl1) == 1, 'end flush line only when asked')
    # random writes leave a dirty cache: destaging takes real media time
    check(fl1 and fl1[0] > 20, 'end flush destages the cache: %s' % fl1)
    check(lat0 == lat1, 'the commands are unchanged by the end flush')
    check(fl1 and abs(s1 - (s0 + 20e-6 + fl1[0] / 1e3)) < 1.5e-3,
          'run time = last completion + host delay + flush: %s %s %s'
          % (s0, s1, fl1))
    # write cache off: nothing to destage, the flush is immediate
    _, _, fl2 = full('--count', '400', '--read-ratio', '0', '--write-cache',
                     'off', '--end-flush')
    check(fl2 and fl2[0] < 1, 'clean cache: immediate flush: %s' % fl2)
    # the FLUSH is the trace's last record, after every command
    tr = os.path.join(d, 'flush.csv')
    run(*(w + ('--end-flush', '--trace', tr)))
    _, _, rf = records(tr)
    check(len(rf) == 401 and rf[-1].split(',')[1] in ('F', 'flush'),
          'trace ends with the FLUSH: %s' % (rf[-1] if rf else None))
    last = max(int(r.split(',')[8]) for r in rf[:-1])
    check(int(rf[-1].split(',')[6]) == last + 20000,
          'the FLUSH arrives one host delay after the last completion')
    check(int(rf[-1].split(',')[8]) > last, 'the FLUSH completes last')
    q = run(*(w + ('--end-flush', '--quiet'))).stdout
    check(' flush_ms ' in q, '--quiet names the flush time: ' + q)

    # host-managed zones (docs/smr.md): zone actions replayed, queued
    # (NCQ NON-DATA), timed; an unaligned write is refused with its name
    z0 = 524 * 524288           # wd-hc620's first sequential zone
    zc = os.path.join(d, 'z.csv')
    with open(zc, 'w') as f:
        f.write('time_ns,op,lba,sectors\n0,W,%d,2048\n0,W,%d,2048\n'
                '1000000,zopen,%d,0\n5000000,zreset,%d,0\n'
                '6000000,W,%d,8\n7000000,zfinish-all,0,0\n'
                % (z0, z0 + 2048, z0 + 524288, z0, z0))
    zt = os.path.join(d, 'z.trace')
    p = run('--model', 'wd-hc620', '--replay', zc, '--trace', zt)
    _, _, rz = records(zt)
    oth = [r.split(',') for r in rz if r.split(',')[1] == 'O']
    check(p.returncode == 0 and len(rz) == 6 and len(oth) == 3,
          'zone replay: %s' % rz)
    # other_ms 0.05 + open 0.1; + reset 1 (one zone); + finish 1 x 2 zones
    check([int(o[8]) - int(o[6]) for o in oth] == [150000, 1050000, 2050000],
          'zone actions timed: %s' % oth)
    check(oth and oth[0][2] == str(z0 + 524288), 'trace names the zone')
    with open(zc, 'a') as f:
        f.write('8000000,W,%d,8\n' % (z0 + 2 * 524288 + 64))
    p = run('--model', 'wd-hc620', '--replay', zc, ok=False)
    check(p.returncode == 1 and 'unaligned write' in p.stderr,
          'unaligned write refused: %s' % p.stderr)
    p = run('--model', 'wd-hc620', '--zoned', '--clients', '2', '--size',
            '1024', '--count', '2000', '--quiet')
    check(p.returncode == 0 and p.stdout.startswith('iops'),
          'zoned writers run (each resets its zone when full): %s'
          % p.stdout)
    # --zone-state: the replay starts from the zones a device's file holds
    zs = os.path.join(d, 'z.zones')
    with open(zs, 'w') as f:
        f.write('# ncq-disk zone state v1 model=wd-hc620 zones=52156 '
                'zone_sectors=524288 conventional=524\n'
                '526 implicitly-open %d\n' % (z0 + 2 * 524288 + 64))
    zw = os.path.join(d, 'zw.csv')
    with open(zw, 'w') as f:
        f.write('time_ns,op,lba,sectors\n0,W,%d,8\n' % (z0 + 2 * 524288 + 64))
    p = run('--model', 'wd-hc620', '--replay', zw, ok=False)
    check(p.returncode == 1 and 'unaligned write' in p.stderr,
          'without the file, the zone is empty: %s' % p.stderr)
    p = run('--model', 'wd-hc620', '--replay', zw, '--zone-state', zs)
    check(p.returncode == 0, 'the replay starts from the file: a write at '
          'its pointer: %s' % p.stderr)
    p = run('--model', 'wd-hc620', '--zoned', '--clients', '3', '--count',
            '3', '--zone-state', zs, '--trace', zt)
    _, _, rz = records(zt)
    check(p.returncode == 0 and sorted(int(r.split(',')[2]) for r in rz) ==
          [z0, z0 + 524288, z0 + 2 * 524288 + 64],
          '--zoned writers start at the file\'s pointers: %s' % rz)
    with open(zs, 'a') as f:
        f.write('527 closed 5\n')
    p = run('--model', 'wd-hc620', '--replay', zw, '--zone-state', zs,
            ok=False)
    check(p.returncode == 2 and 'line 3: write pointer 5 outside zone 527'
          in p.stderr, '--zone-state refuses a bad line: %s' % p.stderr)
    p = run('--zoned', '--count', '10', ok=False)
    check(p.returncode == 2 and 'needs a host-managed model' in p.stderr,
          '--zoned on a conventional model: %s' % p.stderr)


print('test-ncq-sim: %s' % ('all checks passed' if not failures else
                            '%d failures' % failures))
sys.exit(1 if failures else 0)
