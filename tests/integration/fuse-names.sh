#!/bin/bash
# SPDX-License-Identifier: MIT
# The FUSE front end's names: with the default configuration (18,279 disks
# of 4 GPT partitions) the directory holds exactly the 91,395 names
# `sdnum name` predicts, across every change of name length (sdz, sdaa,
# sdzz, sdaaa, sdzzz, sdaaaa); inode numbers are 2 + LUN * 256 + part;
# malformed and absent names are ENOENT; sizes and st_blksize are right;
# the xattrs (devt, lun, wwn, serial) match `sdnum devt` and `sdswarm
# status`; `sfdisk --dump` of a disk file shows the synthetic layout, each
# partition file being that window of the disk. Then a 63-partition
# configuration: dev_ts past partition 15 on major 259 as `sdnum --parts`
# predicts, MBR logicals, and 4 KiB blocks.
. "$(dirname "$0")/../lib/fuse.sh"
requires_fuse python3 sfdisk awk sort comm
SDNUM=$SDSWARM_BIN/sdnum
[ -x "$SDNUM" ] || skip "no $SDNUM"
private_dir T
fuse_mountpoint "$T/mnt"

not_mounted() { ! is_mounted "$1"; }

fuse_daemon "$SDSWARM_TOP/configs/default.conf" || finish
ok "mounted the default configuration on $MNT"

# --- every name, exactly ------------------------------------------------
awk 'BEGIN { for (i = 0; i < 18279; i++) { print i; for (p = 1; p <= 4; p++) print i, p } }' |
	"$SDNUM" name - | sort >"$T/want"
ls -1 "$MNT" | sort >"$T/got"
expect_eq "ls | wc -l" $((18279 * 5)) "$(wc -l <"$T/got")"
expect_eq "names not predicted by sdnum" 0 "$(comm -13 "$T/want" "$T/got" | wc -l)"
expect_eq "predicted names missing" 0 "$(comm -23 "$T/want" "$T/got" | wc -l)"
expect_eq "listing has no duplicates" $((18279 * 5)) "$(uniq "$T/got" | wc -l)"

# --- the boundaries, one by one ----------------------------------------
# name index part: stat it, compare inode, size and xattrs with the tools
python3 - "$MNT" "$SDNUM" <<'EOF' >"$T/bounds" 2>&1
import os, subprocess, sys
mnt, sdnum = sys.argv[1], sys.argv[2]
idx = [0, 1, 25, 26, 27, 701, 702, 703, 18277, 18278]
bad = 0
for i in idx:
    for p in range(5):
        want = subprocess.run([sdnum, "name", str(i), str(p)], capture_output=True, text=True).stdout.strip()
        path = os.path.join(mnt, want)
        st = os.stat(path)
        size = 1 << 40 if p == 0 else None
        if st.st_ino != 2 + i * 256 + p:
            print("FAIL ino", want, st.st_ino); bad += 1
        if p == 0 and st.st_size != 1 << 40:
            print("FAIL size", want, st.st_size); bad += 1
        if st.st_blksize != 512:
            print("FAIL blksize", want, st.st_blksize); bad += 1
        devt = os.getxattr(path, "user.sdswarm.devt").decode()
        wdevt = subprocess.run([sdnum, "devt", str(i), str(p)], capture_output=True, text=True).stdout.strip()
        if devt != wdevt:
            print("FAIL devt", want, devt, wdevt); bad += 1
        if os.getxattr(path, "user.sdswarm.lun").decode() != str(i):
            print("FAIL lun xattr", want); bad += 1
        names = sorted(os.listxattr(path))
        if names != sorted(["user.sdswarm.devt", "user.sdswarm.lun", "user.sdswarm.wwn", "user.sdswarm.serial"]):
            print("FAIL listxattr", want, names); bad += 1
print("checked", len(idx) * 5, "names,", bad, "bad")
EOF
check "boundary names: inode, size, blksize, devt, listxattr" grep -q '^checked 50 names, 0 bad$' "$T/bounds" || cat "$T/bounds"
for n in sdz sdaa sdzz sdaaa sdzzz sdaaaa sdaaaa4; do
	check "$n exists" test -f "$MNT/$n"
done

# --- names that do not exist --------------------------------------------
long=sd$(printf 'a%.0s' $(seq 250))
python3 - "$MNT" "$long" <<'EOF' >"$T/bad" 2>&1
import errno, os, sys
mnt, long = sys.argv[1], sys.argv[2]
names = ["sdA", "sda0", "sda01", "sdzzzzzzzzz", "sda5", "sdaaab", "sdaaab1",
         "sd", "sda-1", "sda1x", "sda256", "sdaa 1", "hda", "sdab00", long,
         "sd" + "z" * 7, "sdfxshrxy", ".sdswarm"]
bad = 0
for n in names:
    try:
        os.stat(os.path.join(mnt, n))
        print("FAIL exists:", n); bad += 1
    except OSError as e:
        if e.errno != errno.ENOENT:
            print("FAIL", n, e); bad += 1
print(len(names), "names,", bad, "bad")
EOF
check "malformed and absent names are ENOENT" grep -q '^18 names, 0 bad$' "$T/bad" || cat "$T/bad"
check "the daemon survived the bad names" daemon_alive

# --- wwn and serial against the control socket ---------------------------
st=$(ctl status --json --lun 702)
want_wwn=$(python3 -c 'import json, sys; print("naa." + json.load(sys.stdin)["lun"]["wwn"][2:])' <<<"$st")
want_serial=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["lun"]["serial"])' <<<"$st")
xa() { python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], sys.argv[2]).decode())' "$@"; }
expect_eq "wwn xattr of sdaaa2" "$want_wwn" "$(xa "$MNT/sdaaa2" user.sdswarm.wwn)"
expect_eq "serial xattr of sdaaa" "$want_serial" "$(xa "$MNT/sdaaa" user.sdswarm.serial)"
out=$(python3 -c 'import os, sys
try:
    os.setxattr(sys.argv[1], "user.sdswarm.lun", b"7")
except OSError as e:
    print(e.strerror)' "$MNT/sda")
expect_eq "setxattr is refused" "Operation not permitted" "$out"

# --- the synthetic table through sfdisk ---------------------------------
sfdisk --dump "$MNT/sdzz" >"$T/dump" 2>"$T/dump.err"
check "sfdisk --dump reads a GPT" grep -q '^label: gpt' "$T/dump"
expect_eq "sfdisk sees 4 partitions" 4 "$(grep -c ' : start=' "$T/dump")"
i=0
while read -r dev start size; do
	i=$((i + 1))
	# sfdisk's names for them are ours
	expect_eq "partition $i device name" "$MNT/sdzz$i" "$dev"
	expect_eq "sdzz$i size matches the table" $((size * 512)) "$(stat -c %s "$MNT/sdzz$i")"
	# the partition file is that window of the disk
	python3 - "$MNT/sdzz$i" "$MNT/sdzz" "$start" "$i" <<'EOF' || fail "sdzz$i is not the disk from sector $start"
import os, sys
part, disk, start, i = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
mark = ("partition %s marker" % i).encode()
fp = os.open(part, os.O_RDWR); fd = os.open(disk, os.O_RDONLY)
os.pwrite(fp, mark, 4097)
ok = os.pread(fd, len(mark), start * 512 + 4097) == mark
os.pwrite(fp, bytes(len(mark)), 4097)
sys.exit(0 if ok else 1)
EOF
done < <(sed -nE 's/^([^ ]+) : start= *([0-9]+), size= *([0-9]+),.*/\1 \2 \3/p' "$T/dump")
expect_eq "sfdisk found nothing wrong" "" "$(grep -vi 'partition table' "$T/dump.err")"
stop_daemon
expect_eq "SIGTERM: exit status" 0 "$?"
check "SIGTERM unmounted $MNT" not_mounted "$MNT"

# --- 63 partitions: GPT, MBR with logicals, 4 KiB blocks -----------------
fuse_daemon "$SDSWARM_TOP/configs/partitions-63.conf" || finish
expect_eq "names with 63 partitions" $((8 * 64 + 8 * 65 + 4 * 64)) "$(ls "$MNT" | wc -l)"
check "sda63 exists" test -f "$MNT/sda63"
check "sda64 does not" test ! -e "$MNT/sda64"
check "sdi64 (MBR: 63 + the extended one) exists" test -f "$MNT/sdi64"
expect_eq "sdi4, the extended partition, is 1 KiB as the kernel shows it" 1024 "$(stat -c %s "$MNT/sdi4")"
expect_eq "sdq block size" 4096 "$(stat -c %o "$MNT/sdq")"
expect_eq "sda1 is the 1G the config asks for" $((1 << 30)) "$(stat -c %s "$MNT/sda1")"
# past partition 15 the kernel's minors come from major 259, in probe order
for ip in "0 15" "0 16" "0 63" "3 20" "9 64" "19 40"; do
	set -- $ip
	n=$("$SDNUM" name "$1" "$2")
	expect_eq "devt of $n" "$("$SDNUM" --parts 64 devt "$1" "$2")" "$(xa "$MNT/$n" user.sdswarm.devt)"
done
expect_eq "sfdisk: 63 GPT partitions on sda" 63 "$(sfdisk --dump "$MNT/sda" 2>/dev/null | grep -c ' : start=')"
# libfdisk stops at 60 MBR partitions (its MAXIMUM_PARTS); the kernel does not
expect_eq "sfdisk: the first 60 MBR partitions on sdi" "$(seq -f "$MNT/sdi%g" 60)" \
	"$(sfdisk --dump "$MNT/sdi" 2>/dev/null | sed -n 's/ : start=.*//p')"
stop_daemon
expect_eq "second daemon: exit status" 0 "$?"
check "unmounted again" not_mounted "$MNT"
finish
