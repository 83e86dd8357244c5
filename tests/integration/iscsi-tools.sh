#!/bin/bash
# SPDX-License-Identifier: MIT
# libiscsi's command-line tools against sdswarmd, their output checked
# against the config and the control socket: iscsi-ls -s (every target,
# every LUN with its type and size), iscsi-inq (standard data; VPD 80h
# serial, 83h designators, B0h block limits), iscsi-readcapacity16. Then a
# config of 301 LUNs on one target: LUNs past 255 use flat space
# addressing, 0x4000|N in the URL and in iscsi-ls's listing.
#
# Both configs set power_on_ua = no: these one-shot tools give up on the
# POWER ON OCCURRED a fresh LUN reports (iscsi-basic.sh covers that case).
# iscsi-inq reads its page code with atoi(), so pages are written in
# decimal: -c 128 (80h), 131 (83h), 176 (B0h); "-c 0x80" asks for page 0.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires python3 iscsi-ls iscsi-inq iscsi-readcapacity16
private_dir T

IQN=iqn.2026-12.org.sdswarm

# run TOOL ARGS...: bounded, output (both streams) in $T/out, its status
run() {
	timeout 20 "$@" >"$T/out" 2>&1
}

# has LINE: the last output has exactly LINE (trailing blanks ignored)
has() {
	sed 's/ *$//' "$T/out" | grep -qxF -- "$1"
}

# lun_field LUN KEY: KEY of LUN in the daemon's status (serial, wwn, ...)
lun_field() {
	ctl --json status --lun "$1" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["lun"][sys.argv[1]])' "$2"
}

# ls_luns: "TARGET LUN TYPE (Size:S)" for each LUN iscsi-ls listed, in
# its order. iscsi-ls's size is READ CAPACITY (10)'s last LBA times the
# block size, rounded down to its unit: 64 MiB shows as 63M, 1 MiB as 1023k.
ls_luns() {
	awk '/^Target:/ { t = substr($1, 8) }
	     /^Lun:/ { print t, substr($1, 5), substr($2, 6), $3 }' "$T/out"
}

# naa_ok WWN: the last VPD 83h output has a binary NAA designator of the
# logical unit whose bytes are WWN's. iscsi-inq prints a designator with
# %s, so what it shows ends before the WWN's first zero byte; at least 8
# bytes must show (the seed of the config that uses it sees to that).
naa_ok() {
	python3 - "$T/out" "$1" <<'EOF'
import sys
out = open(sys.argv[1], 'rb').read()
want = bytes.fromhex(sys.argv[2][2:]).split(b'\0')[0]
for block in out.split(b'DEVICE DESIGNATOR #')[1:]:
    if b'Designator Type:(3) NAA' not in block:
        continue
    ok = (b'Association:(0) LOGICAL_UNIT' in block and
          b'Code Set:(1) BINARY' in block)
    start = block.index(b'Designator:[') + len(b'Designator:[')
    got = block[start:block.rindex(b']')]
    sys.exit(0 if ok and got == want and len(want) >= 8 else 1)
sys.exit(1)
EOF
}

# --- configs/iscsi.conf: two LUNs on t0, none on t1 ----------------------
PORT=$(free_port)
U=iscsi://127.0.0.1:$PORT
sed -e "s/^portal = .*/portal = 127.0.0.1:$PORT/" \
	-e 's/^\[target\]$/[target]\npower_on_ua = no/' \
	"$SDSWARM_TOP/configs/iscsi.conf" >"$T/iscsi.conf"
start_daemon "$T/iscsi.conf" || exit 1

run iscsi-ls -s "$U"
expect_eq "iscsi-ls -s succeeds the first time" 0 $?
expect_eq "iscsi-ls: both targets on the portal" \
	"Target:$IQN:t0 Portal:127.0.0.1:$PORT,1
Target:$IQN:t1 Portal:127.0.0.1:$PORT,1" "$(grep '^Target:' "$T/out" | sort)"
expect_eq "iscsi-ls: t0's two 64 MiB disks, t1 none" \
	"$IQN:t0 0 DIRECT_ACCESS (Size:63M)
$IQN:t0 1 DIRECT_ACCESS (Size:63M)" "$(ls_luns)"

run iscsi-inq "$U/$IQN:t0/0"
expect_eq "iscsi-inq exits 0" 0 $?
check "iscsi-inq: a disk" has "Peripheral Device Type:DIRECT_ACCESS"
check "iscsi-inq: removable = yes" has "Removable:1"
check "iscsi-inq: vendor" has "Vendor:SDSWARM"
check "iscsi-inq: product" has "Product:VDISK"
check "iscsi-inq: revision" has "Revision:0001"

for lun in 0 1; do
	run iscsi-inq -e 1 -c 128 "$U/$IQN:t0/$lun"
	expect_eq "iscsi-inq VPD 80h of LUN $lun exits 0" 0 $?
	check "VPD 80h: LUN $lun's serial" \
		has "Unit Serial Number:[$(lun_field $lun serial)]"
done

run iscsi-inq -e 1 -c 131 "$U/$IQN:t0/0"
expect_eq "iscsi-inq VPD 83h exits 0" 0 $?
check "VPD 83h: the target's SCSI name string" \
	grep -qaF "Designator:[$IQN:t0]" "$T/out"
check "VPD 83h: a relative target port" \
	has "Designator Type:(4) RELATIVE_TARGET_PORT"

# block limits from the [luns] defaults: max_transfer 4M, max_unmap
# 512M, max_write_same 16M, in 512-byte blocks; the thick LUN has no UNMAP
run iscsi-inq -e 1 -c 176 "$U/$IQN:t0/0"
expect_eq "iscsi-inq VPD B0h exits 0" 0 $?
check "VPD B0h: maximum transfer length" has "maximum transfer length:8192"
check "VPD B0h: maximum unmap LBA count" has "maximum unmap lba count:1048576"
check "VPD B0h: maximum write same length" has "maximum write same length:32768"
run iscsi-inq -e 1 -c 176 "$U/$IQN:t0/1"
check "VPD B0h of the thick LUN: no UNMAP" has "maximum unmap lba count:0"

run iscsi-readcapacity16 "$U/$IQN:t0/0"
expect_eq "iscsi-readcapacity16 exits 0" 0 $?
check "readcapacity16: last LBA" has "RETURNED LOGICAL BLOCK ADDRESS:131071"
check "readcapacity16: block size" has "LOGICAL BLOCK LENGTH IN BYTES:512"
check "readcapacity16: thin LUN 0 has LBPME" grep -q "^LBPME:1 " "$T/out"
check "readcapacity16: 64 MiB" has "Total size:67108864"
run iscsi-readcapacity16 "$U/$IQN:t0/1"
check "readcapacity16: thick LUN 1 has no LBPME" grep -q "^LBPME:0 " "$T/out"
check "readcapacity16: thick LUN 1 is 64 MiB" has "Total size:67108864"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?

# --- 301 LUNs on t0 (0..300), one 2 MiB LUN on t1 -------------------------
# seed 123456789h: a WWN of 6h, the OUI, then 36 seed bits with no zero byte
PORT=$(free_port)
U=iscsi://127.0.0.1:$PORT
cat >"$T/many.conf" <<EOF
[target]
seed = 4886718345
max_luns = 1024
power_on_ua = no

[luns]
first = 0
count = 301
size = 1M
partitions = 0

[luns.t1]
first = 512
count = 1
size = 2M
partitions = 0

[store]
type = mem

[iscsi]
enabled = yes
portal = 127.0.0.1:$PORT
targets = 2
luns_per_target = 512
EOF
start_daemon "$T/many.conf" || exit 1

run iscsi-ls -s "$U"
expect_eq "iscsi-ls -s of 302 LUNs exits 0" 0 $?
want=$(for ((n = 0; n <= 300; n++)); do
	echo "$IQN:t0 $((n < 256 ? n : 0x4000 | n)) DIRECT_ACCESS (Size:1023k)"
done)
expect_eq "iscsi-ls: t0's LUNs 0..255, then 0x4000|256..0x4000|300" \
	"$want" "$(ls_luns | grep "^$IQN:t0 ")"
# 2 MiB less a block is 2047k, shown as 1M
expect_eq "iscsi-ls: t1's one LUN" "$IQN:t1 0 DIRECT_ACCESS (Size:1M)" \
	"$(ls_luns | grep "^$IQN:t1 ")"

FLAT300=$((0x4000 | 300))
run iscsi-inq -e 1 -c 128 "$U/$IQN:t0/$FLAT300"
expect_eq "iscsi-inq of LUN 300 as 0x4000|300 exits 0" 0 $?
check "VPD 80h of LUN 300: its serial" \
	has "Unit Serial Number:[$(lun_field 300 serial)]"
run iscsi-inq -e 1 -c 128 "$U/$IQN:t0/255"
check "VPD 80h of LUN 255 (peripheral addressing): its serial" \
	has "Unit Serial Number:[$(lun_field 255 serial)]"
run iscsi-inq -e 1 -c 131 "$U/$IQN:t0/$FLAT300"
check "VPD 83h of LUN 300: its NAA designator is its WWN" \
	naa_ok "$(lun_field 300 wwn)"
run iscsi-readcapacity16 "$U/$IQN:t0/$FLAT300"
expect_eq "iscsi-readcapacity16 of LUN 300 exits 0" 0 $?
check "readcapacity16 of LUN 300: 1 MiB" has "Total size:1048576"
check "readcapacity16 of LUN 300: last LBA" \
	has "RETURNED LOGICAL BLOCK ADDRESS:2047"
# 300 raw is 012Ch: peripheral addressing, bus 1, no LUN of ours
run iscsi-inq "$U/$IQN:t0/300"
check "LUN 300 without the flat bit: refused" \
	grep -q "LOGICAL_UNIT_NOT_SUPPORTED" "$T/out"
run iscsi-inq -e 1 -c 128 "$U/$IQN:t1/0"
check "t1's LUN 0 is table LUN 512" \
	has "Unit Serial Number:[$(lun_field 512 serial)]"
run iscsi-readcapacity16 "$U/$IQN:t1/0"
check "readcapacity16 of t1's LUN 0: 2 MiB" has "Total size:2097152"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
