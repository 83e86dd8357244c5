#!/bin/bash
# SPDX-License-Identifier: MIT
# Every shipped configuration loads (`sdswarmd --config F --check` exits 0
# with its one-line summary), the built-in default is configs/default.conf,
# and broken configurations make the daemon exit 1 with every message
# naming file:line, the section, the key and the value.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
private_dir T
D=$SDSWARMD

# Strips the summary's timing, the one part that differs run to run.
summary() { sed 's/, built in [0-9.]* ms//'; }

n=0
for f in "$SDSWARM_TOP"/configs/*.conf; do
	name=$(basename "$f")
	n=$((n + 1))
	out=$("$D" --config "$f" --check 2>"$T/err")
	rc=$?
	if [ $rc -eq 0 ] && [[ $out == "$f: ok: "* ]] && [ ! -s "$T/err" ]; then
		ok "$name: ${out#"$f: ok: "}"
	else
		fail "$name does not load (exit $rc): $out $(cat "$T/err")"
	fi
	grep -q '^# .*conf: ' <(head -1 "$f") || fail "$name: no comment header saying what it is for"
done
[ "$n" -ge 8 ] || fail "only $n configurations in configs/"

luns_of() { "$D" --config "$SDSWARM_TOP/configs/$1" --check | sed -n 's/.*: ok: \([0-9]*\) LUNs.*/\1/p'; }
expect_eq "default.conf LUNs" 18279 "$(luns_of default.conf)"
expect_eq "disks-257.conf LUNs" 257 "$(luns_of disks-257.conf)"
expect_eq "disks-703.conf LUNs" 703 "$(luns_of disks-703.conf)"
expect_eq "disks-18279.conf LUNs" 18279 "$(luns_of disks-18279.conf)"
expect_eq "quarter-million.conf LUNs" 262144 "$(luns_of quarter-million.conf)"
check "multipath-2.conf: 300 LUNs, 2 portals in 2 port groups" grep -q \
	'300 LUNs.*, 2 iSCSI portals, 2 ALUA port groups' \
	<("$D" --config "$SDSWARM_TOP/configs/multipath-2.conf" --check)
check "multipath-4.conf: 300 LUNs, 4 portals in 2 port groups" grep -q \
	'300 LUNs.*, 4 iSCSI portals, 2 ALUA port groups' \
	<("$D" --config "$SDSWARM_TOP/configs/multipath-4.conf" --check)
check "faults.conf has rules of every kind" \
	test "$(grep -cE '^fault\.[0-9]+ = (medium-read|medium-write|delay|hang|ua|not-ready) ' "$SDSWARM_TOP/configs/faults.conf")" -ge 12
check "faults.conf loads its 12 rules" grep -q '12 fault rules' <("$D" --config "$SDSWARM_TOP/configs/faults.conf" --check)

# no --config: the embedded default, the same as configs/default.conf
builtin=$("$D" --check | summary)
file=$("$D" --config "$SDSWARM_TOP/configs/default.conf" --check | summary)
expect_eq "built-in default = configs/default.conf" "${file#*: ok: }" "${builtin#*: ok: }"
check "built-in default names itself" grep -q '^(built-in default): ok: 18279 LUNs' <<<"$builtin"

# flags override the file
check "--luns 10" grep -q ': ok: 10 LUNs' <("$D" --config "$SDSWARM_TOP/configs/default.conf" --luns 10 --check)
check "--mem-limit 1G" grep -q 'limit 1G' <("$D" --luns 1 --mem-limit 1G --check)
check "--store DIR" grep -q "store file ($T/data, " <("$D" --luns 1 --store "$T/data" --check)
check "--check creates no store directory" test ! -e "$T/data"

# --- error paths: exit 1, nothing on stdout, the exact message -----------
# bad FILE-BODY EXPECTED-LINE... : the file is $T/bad.conf; every expected
# line must appear whole on stderr ("@" stands for the file's path).
bad() {
	local body=$1 want out rc
	shift
	printf '%s' "$body" >"$T/bad.conf"
	out=$("$D" --config "$T/bad.conf" --check 2>"$T/err")
	rc=$?
	if [ $rc -ne 1 ] || [ -n "$out" ]; then
		fail "want exit 1 and no output, got $rc '$out' for: $(head -c 80 "$T/bad.conf" | tr '\n' '|')"
		return
	fi
	for want in "$@"; do
		want=${want//@/$T/bad.conf}
		if grep -qxF -- "$want" "$T/err"; then
			ok "message: $want"
		else
			fail "want the line '$want'; stderr was: $(cat "$T/err")"
		fi
	done
}

bad $'[target]\nseed = 3\n\n[luns]\ncount = 4\nsize = 12Q\n' \
	"@:6: [luns] size = 12Q: not a size (use a number with K, M, G, T or P)"
bad $'[lunz]\ncount = 1\n' \
	"@:1: [lunz]: unknown section (sections: target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, port_group.NAME)"
bad $'[luns]\ncuont = 5\n' "@:2: [luns] cuont = 5: unknown key (did you mean count?)"
bad $'[luns]\ncount = 5\n# again\ncount = 6\n' "@:4: [luns] count = 6: duplicate key (first set on line 2)"
bad $'[luns.a]\ncount = 100\n[luns.b]\nfirst = 50\ncount = 10\n' \
	"@:4: [luns.b] first = 50: LUNs 50-59 overlap [luns.a] (LUNs 0-99, line 1)"
bad $'[target]\nmax_luns = 1000\n[luns]\nfirst = 990\ncount = 20\n' \
	"@:5: [luns] count = 20: LUNs 990-1009 pass max_luns (1000)"
bad $'[luns]\nsize = 1G\nblock_size = 4096\nmax_transfer = 6K\n' \
	"@:4: [luns] max_transfer = 6K: not a multiple of block_size 4096"
bad $'[store]\nmem_limit = 100\n' \
	"@:2: [store] mem_limit = 100: less than one chunk (chunk_size 4K); 0 means no limit"
bad $'[store]\ntype = file\nmem_limit = 1G\n' \
	"@:2: [store] type = file: needs dir = DIRECTORY" \
	"@:3: [store] mem_limit = 1G: applies only to type = mem"
bad $'[faults]\nfault.1 = medium-read luns=0-3 lba=10-5\nfault.2 = explode\n' \
	"@:2: [faults] fault.1 = medium-read luns=0-3 lba=10-5: lba=10-5: first above last" \
	"@:3: [faults] fault.2 = explode: unknown kind 'explode' (medium-read, medium-write, delay, hang, ua, not-ready)"
bad $'[iscsi]\nportal = somewhere\n' \
	"@:2: [iscsi] portal = somewhere: not ADDRESS:PORT (a numeric IPv4 address, or [IPv6], and a port 1..65535, or 0 for a free one)"
bad $'no section here = 1\n' \
	"@:1: no section here = 1: a key before any [section] (sections: target, luns, luns.NAME, store, faults, iscsi, tcmu, fuse, port_group.NAME)"
# several errors: all of them, in line order
bad $'[luns]\nsize = 1X\ncount = -2\nthin = perhaps\n' \
	"@:2: [luns] size = 1X: not a size (use a number with K, M, G, T or P)" \
	"@:3: [luns] count = -2: not a number" \
	"@:4: [luns] thin = perhaps: not yes or no"

# an empty ACL must not read as "no ACL" (that admits every initiator)
bad $'[iscsi]\ninitiators =\n' \
	"@:2: [iscsi] initiators = : names no initiator (remove the key to admit any initiator)"
bad $'[iscsi]\ninitiators = ,\n' \
	"@:2: [iscsi] initiators = ,: names no initiator (remove the key to admit any initiator)"

# LUN files are the owner's unless said otherwise, and said in octal
bad $'[store]\ntype = file\ndir = /tmp/x\nfile_mode = rw\n' \
	"@:4: [store] file_mode = rw: not an octal mode of read and write bits with the owner's both set (0600 to 0666, e.g. 0640)"

# a partition table that does not fit: ptable_check's reason follows the prefix
printf '[luns]\nsize = 64M\npartitions = 63\n' >"$T/bad.conf"
"$D" --config "$T/bad.conf" --check 2>"$T/err" >/dev/null
rc=$?
expect_eq "layout that does not fit: exit" 1 "$rc"
check "layout message names file:line and key" \
	grep -qF "$T/bad.conf:3: [luns] partitions = 63: the gpt partition table does not fit a 64M disk: " "$T/err"

# the command line
out=$("$D" --luns 1 --mem-limit 12Q --check 2>"$T/err"); rc=$?
expect_eq "--mem-limit 12Q: exit" 1 "$rc"
check "--mem-limit 12Q: message" grep -qxF "command line: [store] mem_limit = 12Q: not a size (use a number with K, M, G, T or P)" "$T/err"
out=$("$D" --luns 2000000 --check 2>"$T/err"); rc=$?
expect_eq "--luns 2000000: exit (a usage error)" 2 "$rc"
check "--luns 2000000: message" grep -qxF "sdswarmd: --luns 2000000: not a number from 0 to 1048576" "$T/err"
out=$("$D" --config "$T/absent.conf" --check 2>"$T/err"); rc=$?
expect_eq "missing file: exit" 1 "$rc"
check "missing file: message" grep -qxF "$T/absent.conf: cannot open: No such file or directory" "$T/err"
# A read that fails names the file and the line, and is never taken for the
# end of the file (the lines after it would vanish: an [iscsi] ACL).
out=$("$D" --config "$T" --check 2>"$T/err"); rc=$?
expect_eq "a directory: exit" 1 "$rc"
check "a directory: message" grep -qxF "$T:1: read error: Is a directory" "$T/err"
# /dev/zero has no line end: a reader that let the line grow would fail to
# allocate under a memory limit. The plain build: ASan's shadow memory does
# not fit under ulimit -v.
P=$SDSWARM_PLAIN_BIN/sdswarmd
if [ -x "$P" ]; then
	out=$(ulimit -v 300000 && "$P" --config /dev/zero --check 2>"$T/err"); rc=$?
	expect_eq "/dev/zero under ulimit -v: exit (${out:-no output})" 1 "$rc"
	check "/dev/zero: message" grep -qxF \
		"/dev/zero:1: line longer than 4000 characters; the rest of the file is not read" "$T/err"
else
	echo "note: no $P: /dev/zero under a memory limit not read"
fi
"$D" --bogus >/dev/null 2>&1; rc=$?
expect_eq "unknown flag: exit" 2 "$rc"
check "--help" grep -q '^usage: sdswarmd' <("$D" --help)

finish
