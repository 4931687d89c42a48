/*
 * ncq-model: the one table of a drive's parameters.
 *
 * Every field of NcqParams and every key of a model file is one row
 * below; NcqParams (ncq-model.h) is generated from this list, so a field
 * cannot exist without its row.  From the rows come the parser's keys,
 * the defaults, the range checks (params.c), the parameters' fingerprint
 * in a saved state (state.c), `ncq-sim --list-params` (docs/model.md's
 * parameter table) and `ncq-sim --dump-model` (what ncq-fit reads).
 * docs/contributing.md#a-model-parameter says how to add one.
 *
 * P(ctype, field, dim, section, key, type, unit, default, min, max,
 *   flags, fp, doc): a field and its key.
 *   type     how the file writes it (NCQ_KT_<type>, params.c)
 *   unit     the file's unit, for the docs
 *   default  in the file's units, as a file would write it ("": 0)
 *   min max  the stored value's range (ns, sectors, ppb, ...); checked
 *            for every drive unless flags say hard disks or SSDs only
 *   flags    NCQ_PF_*: required, hard disks or SSDs only, a run-time
 *            setting too
 *   fp       how a saved state checks the row: 1..9, the linear
 *            version from which the parameters' fingerprint hashes it
 *            (a row's place in the list is its place in that hash, so
 *            those rows keep their order); NCQ_FP_NAMED, every row added
 *            since: the state names it with its value's hash when the
 *            value is not the default (docs/model-state.md)
 *   doc      one line for docs/model.md
 * K(section, key, type, lvalue, unit, doc): a key that writes into a
 *   field of another row (the analytic zones' outer and inner spt).
 * F(ctype, field, dim, doc): a field another row's key fills (the seek
 *   table's point count); in the fingerprint through that row.
 * NCQ_PARAM_SECTIONS lists the sections; every row's is one of them.
 * NCQ_SETTINGS names the rows that are run-time settings as well.
 *
 * The fingerprint names a row by its C field (the format hash of every
 * version covers the names): rename a field and test-state fails.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_IDE_NCQ_PARAMS_H
#define HW_IDE_NCQ_PARAMS_H

#define NCQ_PF_REQUIRED 1u  /* a model file must give it */
#define NCQ_PF_HDD      2u  /* range checked for hard disks only */
#define NCQ_PF_SSD      4u  /* range checked for SSDs only */
#define NCQ_PF_SETTING  8u  /* also a run-time setting: NCQ_SETTINGS */

/* fp of a row added after the linear versions: checked by its name */
#define NCQ_FP_NAMED    1000u

#define NCQ_PB_MAX      UINT64_MAX          /* no upper bound */
#define NCQ_PB_10S      10000000000ULL      /* times: far from overflow */

/* The sections of a model file, in the order docs and ncq-fit write them. */
#define NCQ_PARAM_SECTIONS \
    "drive", "layout", "seek", "overhead", "cache", "firmware", "power", \
    "ssd", "zones", "media_cache"

#define NCQ_PARAMS(P, K, F) \
    P(char, name, [48], drive, name, STR, "", "", 0, NCQ_PB_MAX, \
      NCQ_PF_REQUIRED, 1, "short name, e.g. st3400620as") \
    P(char, model, [41], drive, model, STR, "", "", 0, NCQ_PB_MAX, \
      NCQ_PF_REQUIRED, 1, "IDENTIFY model string (words 27-46)") \
    P(char, firmware, [9], drive, firmware, STR, "", "1.0", 0, NCQ_PB_MAX, \
      0, 1, "IDENTIFY firmware revision (words 23-26)") \
    P(NcqKind, kind, , drive, kind, KIND, "hdd/ssd", "", 0, NCQ_KIND_SSD, \
      NCQ_PF_REQUIRED, 1, "a hard disk or an SSD") \
    P(uint64_t, capacity, , drive, capacity, U64, "sectors", "", 1, \
      NCQ_PB_MAX, NCQ_PF_REQUIRED, 1, "exported 512-byte sectors") \
    P(uint32_t, rpm, , drive, rpm, U32, "rev/min", "1", 1000, 30000, \
      NCQ_PF_HDD, 1, "spindle speed (an SSD: 1)") \
    P(uint32_t, queue_depth, , drive, queue_depth, U32, "commands", "32", \
      1, NCQ_MAX_TAGS, 0, 1, "NCQ queue depth (IDENTIFY word 75)") \
    P(bool, cdl, , firmware, cdl, BOOL, "on/off", "off", 0, 1, 0, 3, \
      "declares Command Duration Limits (hard disks only, cdl.md)") \
    P(uint64_t, bus_bytes_per_s, , drive, bus_mb_s, MBPS, "MB/s", "300", \
      1000000, NCQ_PB_MAX, 0, 1, \
      "interface rate (default: the link's rate when only sata_gen is " \
      "given, else 300); at most the link's") \
    P(uint32_t, sata_gen, , drive, sata_gen, U32, "", "", 1, \
      NCQ_SATA_GEN_MAX, 0, 9, \
      "SATA link, 1, 2, 3 = 1.5, 3.0, 6.0 Gb/s: IDENTIFY words 76/77 and " \
      "the AHCI port's speed (default: the slowest that carries bus_mb_s); " \
      "in the fingerprint: the guest sees it") \
    P(uint32_t, ata_major, , drive, ata_major, U32, "", "7", 4, 12, \
      0, 9, "IDENTIFY word 80, newest standard (7 = ATA/ATAPI-7 ... 12 = " \
      "ACS-5); in the fingerprint: it decides READ LOG DMA EXT") \
    P(uint32_t, ata_minor, , drive, ata_minor, HEX16, "hex", "0x001d", 0, \
      0xfffe, 0, 9, "IDENTIFY word 81, minor version code; 0xffff would " \
      "mean not reported, use 0x0000 (0x001d: ATA/ATAPI-7 published); in " \
      "the fingerprint: the guest sees it") \
    P(uint32_t, buffer_sectors, , drive, buffer_kib, KIB_SECT, "KiB", "", \
      0, 0xfffe, 0, 9, "IDENTIFY word 21, 0: not reported (default: " \
      "segments x segment_kib + write_cache_kib, an SSD's " \
      "write_buffer_kib); in the fingerprint: the guest sees it") \
    P(uint32_t, heads, , layout, heads, U32, "", "", 1, 255, NCQ_PF_HDD, 1, \
      "recording surfaces") \
    P(uint32_t, cylinders, , layout, cylinders, U32, "", "", 0, 10000000, \
      NCQ_PF_HDD, 1, "cylinders (zone lines: their sum when not given)") \
    P(uint32_t, nzones, , layout, zones, U32, "", "", 0, NCQ_MAX_ZONES, 0, \
      0, "analytic zones: this many, equal cylinders, spt linear from " \
      "outer_spt to inner_spt (fingerprinted through zone)") \
    P(NcqZone, zones, [NCQ_MAX_ZONES], layout, zone, ZONE, "", "", 0, \
      NCQ_PB_MAX, 0, 1, "repeated: first_cyl cyl_count spt [track_skew=S " \
      "cyl_skew=S first=S front=N spares=N/track|cyl|Rcyl|zone]") \
    K(layout, outer_spt, U32, zones[0].spt, "sectors", \
      "analytic zones: sectors per track of the outer zone " \
      "(fingerprinted through zone)") \
    K(layout, inner_spt, U32, zones[1].spt, "sectors", \
      "analytic zones: sectors per track of the inner zone " \
      "(fingerprinted through zone)") \
    P(uint32_t, spare_per_track, , layout, spare_per_track, U32, \
      "sectors", "", 0, NCQ_PB_MAX, 0, 1, \
      "unmapped sectors at the end of each track") \
    P(uint32_t, track_skew_ppb, , layout, track_skew, FRAC, "rev", "", 0, \
      999999999, 0, 1, "skew per head switch") \
    P(uint32_t, cyl_skew_ppb, , layout, cyl_skew, FRAC, "rev", "", 0, \
      999999999, 0, 1, "skew per cylinder switch") \
    P(NcqSeekType, seek_type, , seek, type, SEEKTYPE, "twopart/table", \
      "twopart", 0, NCQ_SEEK_TABLE, 0, 1, \
      "a + b sqrt(d) below x, c + e d beyond; or a table of points") \
    P(int64_t, seek_a_ns, , seek, a_ms, MS, "ms", "", 0, NCQ_PB_10S, 0, 1, \
      "twopart: a") \
    P(int64_t, seek_b_ns, , seek, b_ms, MS, "ms", "", 0, NCQ_PB_10S, 0, 1, \
      "twopart: b, per sqrt(cylinder); at most 100 ms") \
    P(int64_t, seek_c_ns, , seek, c_ms, MS, "ms", "", 0, NCQ_PB_10S, 0, 1, \
      "twopart: c") \
    P(int64_t, seek_e_ns, , seek, e_ms, MS, "ms", "", 0, NCQ_PB_10S, 0, 1, \
      "twopart: e, per cylinder") \
    P(uint32_t, seek_x, , seek, x, U32, "cylinders", "", 0, 10000000, \
      NCQ_PF_HDD, 1, "twopart: where the linear part starts") \
    F(uint32_t, seek_npoints, , "the count of point lines") \
    P(NcqSeekPoint, seek_points, [NCQ_MAX_SEEK_POINTS], seek, point, POINT, \
      "cylinders ms", "", 0, NCQ_PB_MAX, 0, 1, \
      "repeated, table: distance ms, interpolated linearly (2 or more)") \
    P(int64_t, head_switch_ns, , seek, head_switch_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "least cost of a seek onto another head") \
    P(int64_t, write_settle_ns, , seek, write_settle_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "extra settle before writing") \
    P(int64_t, seek_jitter_ns, , seek, jitter_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "the settle varies uniformly in [0, this]") \
    P(int64_t, seek_plan_settle_ns, , seek, plan_settle_ms, MS, "ms", "", \
      0, NCQ_PB_10S, 0, 1, "settle the firmware allows for when it plans") \
    P(int64_t, ovh_read_miss_ns, , overhead, read_miss_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "command overhead of a media read") \
    P(int64_t, ovh_read_hit_ns, , overhead, read_hit_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "command overhead of a buffer hit") \
    P(int64_t, ovh_write_ns, , overhead, write_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "command overhead of a write") \
    P(int64_t, ovh_other_ns, , overhead, other_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 1, "command overhead of a non-media command") \
    P(bool, zero_latency, , firmware, zero_latency, BOOL, "on/off", "off", \
      0, 1, NCQ_PF_SETTING, 1, "zero-latency access within a track") \
    P(uint32_t, cache_segments, , cache, segments, U32, "", "16", 0, \
      NCQ_PB_MAX, 0, 1, "read cache segments, LRU") \
    P(uint32_t, segment_sectors, , cache, segment_kib, KIB_SECT, "KiB", \
      "512", 0, NCQ_PB_MAX, 0, 1, "size of a segment") \
    P(uint32_t, readahead_sectors, , cache, readahead_kib, KIB_SECT, "KiB", \
      "", 0, NCQ_PB_MAX, 0, 1, "read-ahead after a miss, queue empty") \
    P(uint32_t, min_readahead_sectors, , cache, min_readahead_kib, \
      KIB_SECT, "KiB", "", 0, NCQ_PB_MAX, 0, 1, \
      "read-ahead after a miss with commands waiting") \
    P(uint32_t, write_cache_sectors, , cache, write_cache_kib, KIB_SECT, \
      "KiB", "4096", 0, NCQ_PB_MAX, 0, 1, "room for dirty data") \
    P(bool, write_cache, , cache, write_cache, BOOL, "on/off", "on", 0, 1, \
      NCQ_PF_SETTING, 1, "the write cache's setting at power-on") \
    P(NcqPolicy, policy, , firmware, policy, POLICY, "name", "sptf", 0, \
      NCQ_POLICY__MAX - 1, NCQ_PF_SETTING, 1, \
      "scheduling policy (policy.c's table)") \
    P(uint32_t, aging_weight_milli, , firmware, aging_weight, MILLI, "", \
      "", 0, NCQ_PB_MAX, NCQ_PF_SETTING, 1, \
      "aged-sptf: positioning time less weight x age") \
    P(int64_t, starvation_timeout_ns, , firmware, starvation_timeout_ms, \
      MS, "ms", "", 0, NCQ_MAX_TIMEOUT_NS, NCQ_PF_SETTING, 1, \
      "the oldest command goes first once this old (0: never)") \
    P(int64_t, prio_timeout_ns, , firmware, prio_timeout_ms, MS, "ms", "", \
      0, NCQ_MAX_TIMEOUT_NS, NCQ_PF_SETTING, 1, \
      "a high-priority command goes first once this old (0: never)") \
    P(bool, honour_prio, , firmware, honour_prio, BOOL, "on/off", "off", 0, \
      1, NCQ_PF_SETTING, 1, "serve NCQ high-priority commands first") \
    P(uint32_t, clustering_sectors, , firmware, clustering_sectors, U32, \
      "sectors", "", 0, NCQ_MAX_SECTORS, NCQ_PF_SETTING, 1, \
      "merge adjacent queued commands up to this (0: off)") \
    P(uint32_t, sched_window, , firmware, window, U32, "commands", "", 0, \
      NCQ_PB_MAX, 0, 1, "oldest candidates evaluated (0: all)") \
    P(int64_t, sched_eval_ns, , firmware, eval_us, US, "us", "", 0, \
      NCQ_PB_10S, 0, 1, "firmware time per evaluated candidate") \
    P(bool, plan_ahead, , firmware, plan_ahead, BOOL, "on/off", "off", 0, \
      1, 0, 1, "candidates are the commands there when the previous " \
      "access was planned") \
    P(uint32_t, channels, , ssd, channels, U32, "", "", 1, 16, NCQ_PF_SSD, \
      1, "flash channels") \
    P(uint32_t, dies_per_channel, , ssd, dies_per_channel, U32, "", "", 1, \
      16, NCQ_PF_SSD, 1, "dies on each channel") \
    P(uint32_t, page_bytes, , ssd, page_kib, KIB_BYTES, "KiB", "", 0, \
      NCQ_PB_MAX, 0, 1, "flash page, a multiple of 0.5") \
    P(int64_t, page_read_ns, , ssd, page_read_us, US, "us", "", 0, \
      NCQ_PB_10S, 0, 1, "die time to read a page") \
    P(int64_t, page_program_ns, , ssd, page_program_us, US, "us", "", 0, \
      NCQ_PB_10S, 0, 1, "die time to program a page") \
    P(uint64_t, channel_bytes_per_s, , ssd, channel_mb_s, MBPS, "MB/s", "", \
      0, NCQ_PB_MAX, 0, 1, "a channel's transfer rate") \
    P(uint32_t, write_buffer_bytes, , ssd, write_buffer_kib, KIB_BYTES, \
      "KiB", "", 0, NCQ_PB_MAX, 0, 1, "RAM write buffer, 1 page or more") \
    P(int64_t, ssd_read_cmd_ns, , ssd, read_cmd_us, US, "us", "", 0, \
      NCQ_PB_10S, 0, 1, "controller time per read command") \
    P(int64_t, ssd_write_cmd_ns, , ssd, write_cmd_us, US, "us", "", 0, \
      NCQ_PB_10S, 0, 1, "controller time per write command") \
    P(uint64_t, zone_sectors, , zones, zone_sectors, U64, "sectors", "", 0, \
      NCQ_PB_MAX, 0, 5, "host-managed zone size, a power of two (0: no " \
      "zones; smr.md)") \
    P(uint32_t, zone_conv, , zones, conventional, U32, "zones", "", 0, \
      NCQ_PB_MAX, 0, 5, "conventional zones from LBA 0") \
    P(uint32_t, zone_max_open, , zones, max_open, U32, "zones", "", 0, \
      NCQ_PB_MAX, 0, 5, "open zones at most, 1..1024") \
    P(uint32_t, zone_opt_open, , zones, optimal_open, U32, "zones", "", 0, \
      NCQ_PB_MAX, 0, 5, "IDENTIFY log 09h: optimal open zones") \
    P(uint32_t, zone_opt_nonseq, , zones, optimal_nonseq, U32, "zones", "", \
      0, NCQ_PB_MAX, 0, 5, \
      "IDENTIFY log 09h: optimal non-sequentially written zones") \
    P(bool, zone_urswrz, , zones, urswrz, BOOL, "on/off", "off", 0, 1, 0, \
      5, "reads past the write pointer allowed") \
    P(int64_t, zone_reset_ns, , zones, reset_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 5, "RESET WRITE POINTER, per zone") \
    P(int64_t, zone_finish_ns, , zones, finish_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 5, "FINISH ZONE, per zone") \
    P(int64_t, zone_open_ns, , zones, open_ms, MS, "ms", "", 0, \
      NCQ_PB_10S, 0, 5, "OPEN and CLOSE ZONE") \
    P(int64_t, spinup_ns, , power, spinup_ms, MS, "ms", "", 0, \
      NCQ_MAX_SPIN_NS, NCQ_PF_HDD, 6, "standby to ready (hard disks: " \
      "default 10000, the Barracuda 7200.8's; an SSD has none)") \
    P(int64_t, spindown_ns, , power, spindown_ms, MS, "ms", "", 0, \
      NCQ_MAX_SPIN_NS, NCQ_PF_HDD, 6, "ready to spindle stop (hard disks: " \
      "default 12000; an SSD has none)") \
    P(int64_t, recovery_ns, , firmware, recovery_ms, MS, "ms", "", 0, \
      NCQ_MAX_TIMEOUT_NS, 0, 7, "retries of an unrecoverable sector " \
      "before it is reported, unless SCT ERC sets less (0: at once)") \
    P(uint64_t, mc_sectors, , media_cache, sectors, U64, "sectors", "", 0, \
      NCQ_PB_MAX, 0, 8, "drive-managed SMR: the persistent media cache's " \
      "capacity (0: none; mcache.c, smr.md)") \
    P(uint32_t, mc_map, , media_cache, map_extents, U32, "extents", "", 0, \
      16777216, 0, 8, "extents the cache's map holds at most (1.., with " \
      "sectors)") \
    P(uint64_t, mc_lba, , media_cache, lba, U64, "LBA", "", 0, NCQ_PB_MAX, \
      0, 8, "the cache's tracks, timed as the LBAs from here") \
    P(uint32_t, mc_band_sectors, , media_cache, band_kib, KIB_SECT, "KiB", \
      "", 0, 1048576, 0, 8, "a shingled band (4..524288 KiB, with sectors)") \
    P(int64_t, mc_idle_ns, , media_cache, idle_ms, MS, "ms", "", 0, \
      NCQ_MAX_SPIN_NS, 0, 8, "idle this long before the cache is cleaned") \
    P(int64_t, mc_clean_ns, , media_cache, clean_ms, MS, "ms", "", 0, \
      NCQ_MAX_SPIN_NS, 0, 8, "firmware time per band cleaned")

/*
 * The run-time settings: the rows flagged NCQ_PF_SETTING, one line each,
 * in the order NcqSettings holds them (it is generated from this list)
 * and the saved state visits them.  S(field, name, aliases):
 *   field    the row's NcqParams field: its type, doc line and bounds
 *            (min, max) are the setting's; ncq_settings_check enforces them
 *   name     the one name users type: the -device property, QMP's and
 *            HMP's key, ncq-sim's --NAME, the docs' settings tables
 *   aliases  older spellings still taken, space-separated; an alias
 *            ending in "-ns" reads a bare number as nanoseconds
 * A setting's text is its model file key's (a time may carry a unit,
 * ns, us, ms or s; a bare number is ms).  test-settings fails when a
 * flagged row has no line here or a line no flagged row.
 */
#define NCQ_SETTINGS(S) \
    S(policy, "policy", "") \
    S(aging_weight_milli, "aging-weight", "") \
    S(starvation_timeout_ns, "starvation-timeout", \
      "timeout starvation-timeout-ns") \
    S(prio_timeout_ns, "prio-timeout", "prio-timeout-ns") \
    S(honour_prio, "honour-prio", "") \
    S(clustering_sectors, "clustering", "") \
    S(write_cache, "write-cache", "") \
    S(zero_latency, "zero-latency", "")

#endif
